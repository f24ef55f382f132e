import GRDB
import Synchronization

/// Writes to one SQLite database that share transactions: a write that arrives while another group
/// is being written waits for the writer and goes into the next transaction together with every
/// other write that arrived meanwhile (group commit). Each write runs in a savepoint of its own, so
/// one that throws is undone alone and the others commit; a write's result is handed back only once
/// its group has committed, so an answer never reports what a failed commit lost.
///
/// A lone write costs what ``DatabasePool/write(_:)`` costs (without a savepoint: when it throws,
/// its transaction is rolled back). Under load — many devices pushing at
/// once — a group takes one trip to the writer's queue and one commit instead of one each.
final class GroupCommit: Sendable {
    /// A write waiting for its group, its result type erased.
    private struct Pending: Sendable {
        /// Runs the write — in a savepoint when others share its transaction (`isolated`) — and says
        /// whether it threw; what it returns answers the caller once the group has committed
        /// (`nil`) or failed to (the commit's error).
        let apply: @Sendable (Database, _ isolated: Bool) -> (answer: @Sendable ((any Error)?) -> Void, failed: Bool)
        /// Answers the caller when its group failed before its write ran.
        let fail: @Sendable (any Error) -> Void
    }

    /// The statements around a group and around each write in it, prepared once on the writer's
    /// connection and run again (GRDB's `inTransaction` and `inSavepoint` have SQLite parse theirs on
    /// every call, which in a group is every push).
    private enum Bracket: String {
        case begin = "BEGIN IMMEDIATE TRANSACTION"
        case commit = "COMMIT TRANSACTION"
        case savepoint = "SAVEPOINT groupWrite"
        case release = "RELEASE SAVEPOINT groupWrite"
        case undo = "ROLLBACK TO SAVEPOINT groupWrite"

        func run(_ db: Database) throws { try db.cachedStatement(sql: rawValue).execute() }
    }

    /// The most writes one transaction takes; the rest go into the next, after the writer's queue has
    /// served whatever else waits on it (compaction, tokens, the console).
    static let largestGroup = 64

    private let pool: DatabasePool
    private let state = Mutex<(waiting: [Pending], writing: Bool)>(([], false))

    init(pool: DatabasePool) {
        self.pool = pool
    }

    /// Writes waiting for a group (a test lets the writer go once a known number wait).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Runs `updates` in the next group's transaction and returns its result once that has committed.
    /// - Throws: what `updates` throws (only its own changes are undone), or the group's commit error.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            enqueue(Self.pending(updates) { continuation.resume(with: $0) })
        }
    }

    /// ``write(_:)`` answered by a callback instead of a suspended task: `completion` is called on the
    /// writer's thread once the group has committed (or failed to).
    func submit<T: Sendable>(
        _ updates: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        enqueue(Self.pending(updates, answer: completion))
    }

    /// `updates` as a write of a group, answered with `answer`.
    private static func pending<T: Sendable>(
        _ updates: @escaping @Sendable (Database) throws -> T,
        answer: @escaping @Sendable (Result<T, any Error>) -> Void
    ) -> Pending {
        Pending(
            apply: { db, isolated in
                let result: Result<T, any Error>
                do {
                    if isolated {
                        try Bracket.savepoint.run(db)
                        let value: T
                        do {
                            value = try updates(db)
                            try Bracket.release.run(db)
                        } catch {
                            // (A failure SQLite answered by rolling the whole transaction back left no
                            // savepoint to undo: the group then ends with SQLITE_ABORT.)
                            if db.isInsideTransaction {
                                try Bracket.undo.run(db)
                                try Bracket.release.run(db)
                            }
                            throw error
                        }
                        result = .success(value)
                    } else {
                        result = .success(try updates(db))
                    }
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
        let group = state.withLock { state in
            let group = Array(state.waiting.prefix(Self.largestGroup))
            state.waiting.removeFirst(group.count)
            return group
        }
        var answers: [@Sendable ((any Error)?) -> Void] = []
        answers.reserveCapacity(group.count)
        do {
            try Bracket.begin.run(db)
            do {
                // A lone write needs no savepoint: when it throws, its transaction is rolled back instead.
                let isolated = group.count > 1
                var loneWriteFailed = false
                for pending in group {
                    // A failed statement can make SQLite roll the whole transaction back; a savepoint
                    // outside one would then commit on its own, before the group knows how it ends.
                    guard db.isInsideTransaction else { throw DatabaseError(resultCode: .SQLITE_ABORT) }
                    let (answer, failed) = pending.apply(db, isolated)
                    answers.append(answer)
                    loneWriteFailed = failed && !isolated
                }
                if loneWriteFailed {
                    try db.rollback()
                } else {
                    try Bracket.commit.run(db)
                }
            } catch {
                try? db.rollback()
                throw error
            }
            for answer in answers { answer(nil) }
        } catch {
            for answer in answers { answer(error) }
            for pending in group.dropFirst(answers.count) { pending.fail(error) }
        }
        let more = state.withLock { state in
            state.writing = !state.waiting.isEmpty
            return state.writing
        }
        if more { scheduleGroup() }
    }
}
