package import GRDB
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// Writes to one SQLite database that share transactions: a write that arrives while another group
/// is being written waits for the writer and goes into the next transaction together with every
/// other write that arrived meanwhile (group commit). A write's result is handed back only once its
/// group has committed, so an answer never reports what a failed commit lost.
///
/// Writes run one after the other in the group's transaction, with no savepoint each (two more
/// statements per write, most of what a group saves otherwise). A write that throws having changed
/// nothing (a check that refuses it, or a statement SQLite undid alone) is answered with its error
/// and the group goes on. One that throws having changed something cannot be undone alone: the
/// transaction is rolled back and the group's other writes run again in a new one, without it
/// (SQLite's count of changed rows tells the two apart; the writes are pushes, which change rows,
/// never the schema). So is one whose failure made SQLite roll the transaction back itself.
///
/// Under load — many devices pushing at once — a group takes one trip to the writer's queue and one
/// commit instead of one each.
package final class GroupCommit: Sendable {
    /// A write waiting for its group, its result type erased.
    private struct Pending: Sendable {
        /// Runs the write and says whether it threw; what it returns answers the caller once the
        /// group has committed (`nil`) or failed to (the commit's error).
        package let apply: @Sendable (Database) -> (answer: @Sendable ((any Error)?) -> Void, failed: Bool)
        /// Answers the caller when its group failed before its write ran.
        package let fail: @Sendable (any Error) -> Void
    }

    /// The most writes one transaction takes; the rest go into the next, after the writer's queue has
    /// served whatever else waits on it (compaction, tokens, the console).
    package static let largestGroup = 64

    private let pool: DatabasePool
    private let state = Mutex<(waiting: [Pending], writing: Bool)>(([], false))

    package init(pool: DatabasePool) {
        self.pool = pool
    }

    /// Writes waiting for a group (a test lets the writer go once a known number wait).
    package var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Runs `updates` in the next group's transaction and returns its result once that has committed.
    /// - Throws: what `updates` throws (only its own changes are undone), or the group's commit error.
    package func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            enqueue(Self.pending(updates) { continuation.resume(with: $0) })
        }
    }

    /// `updates` as a write of a group, answered with `answer`.
    private static func pending<T: Sendable>(
        _ updates: @escaping @Sendable (Database) throws -> T,
        answer: @escaping @Sendable (Result<T, any Error>) -> Void
    ) -> Pending {
        Pending(
            apply: { db in
                let result: Result<T, any Error>
                do {
                    result = .success(try updates(db))
                } catch {
                    result = .failure(error)
                }
                let failed: Bool
                if case .failure = result { failed = true } else { failed = false }
                return (
                    { commitError in
                        if let commitError, case .success = result {
                            answer(.failure(commitError))
                        } else {
                            answer(result)
                        }
                    }, failed
                )
            },
            fail: { answer(.failure($0)) })
    }

    private func enqueue(_ pending: Pending) {
        let startsWriter = state.withLock { state in
            state.waiting.append(pending)
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        if startsWriter { scheduleGroup() }
    }

    private func scheduleGroup() {
        pool.asyncWriteWithoutTransaction { db in self.writeGroup(db) }
    }

    /// One transaction for the writes waiting now; then the next group, if any arrived meanwhile.
    private func writeGroup(_ db: Database) {
        var group = state.withLock { state in
            let group = Array(state.waiting.prefix(Self.largestGroup))
            state.waiting.removeFirst(group.count)
            return group
        }
        while !group.isEmpty {
            switch commit(group, db) {
            case .committed, .failed:
                group = []
            case .partlyWritten(let index, let answer):
                // Undone with the rest of its transaction; the others go again without it.
                answer(nil)
                group.remove(at: index)
            }
        }
        let more = state.withLock { state in
            state.writing = !state.waiting.isEmpty
            return state.writing
        }
        if more { scheduleGroup() }
    }

    private enum GroupEnd {
        case committed, failed
        /// The write at this index threw after changing something (or SQLite rolled the transaction
        /// back as it failed); the transaction was rolled back.
        case partlyWritten(Int, answer: @Sendable ((any Error)?) -> Void)
    }

    /// Runs `group` in one transaction and answers its writes, unless one of them throws after
    /// changing something: then the transaction is rolled back and nobody is answered but that write.
    private func commit(_ group: [Pending], _ db: Database) -> GroupEnd {
        var answers: [@Sendable ((any Error)?) -> Void] = []
        answers.reserveCapacity(group.count)
        do {
            try TransactionBracket.beginImmediate.run(db)
            do {
                for (index, pending) in group.enumerated() {
                    // A failed statement can make SQLite roll the whole transaction back; what runs
                    // after it would then commit on its own, before the group knows how it ends.
                    guard db.isInsideTransaction else { throw DatabaseError(resultCode: .SQLITE_ABORT) }
                    let changes = db.totalChangesCount
                    let (answer, failed) = pending.apply(db)
                    if failed, db.totalChangesCount != changes || !db.isInsideTransaction {
                        try db.rollback()
                        return .partlyWritten(index, answer: answer)
                    }
                    answers.append(answer)
                }
                try TransactionBracket.commit.run(db)
            } catch {
                try? db.rollback()
                throw error
            }
            for answer in answers { answer(nil) }
            return .committed
        } catch {
            for answer in answers { answer(error) }
            for pending in group.dropFirst(answers.count) { pending.fail(error) }
            return .failed
        }
    }
}
