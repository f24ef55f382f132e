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
///
/// A write that finds the writer idle and no group waiting may be its own group, committed in place
/// on the thread that asked (``WriterLane/inPlace(_:)``): one device's push then makes no trip to
/// the writer's queue and back (issue 77, item 1). But a write in place holds that thread — an
/// event loop — until it commits, so the writes other connections are sending meanwhile are not
/// even read, let alone grouped: with eight devices pushing at once, in place cost each push more
/// than the groups did. So writes go in place only while writes come alone: a group of several on
/// the writer's queue sends every write there, until ``aloneAgainAfter`` groups in a row held one
/// write each; and even then every ``probeEvery``-th lone write goes to the queue, where the writes
/// that arrive while it commits show whether others are coming. If another connection to the file holds
/// SQLite's write lock, the group goes to the writer's queue and waits there, not on the thread that
/// asked.
package final class GroupCommit: Sendable {
    /// A write waiting for its group, its result type erased.
    private struct Pending: Sendable {
        /// Runs the write and says whether it threw; what it returns answers the caller once the
        /// group has committed (`nil`) or failed to (the commit's error).
        package let apply: @Sendable (Database) -> (answer: @Sendable ((any Error)?) -> Void, failed: Bool)
        /// Answers the caller when its group failed before its write ran.
        package let fail: @Sendable (any Error) -> Void
    }

    /// The statements that open and close a group's transaction, prepared once on the writer's
    /// connection and run again (GRDB's `inTransaction` has SQLite parse its own on every call).
    private enum Bracket: String {
        case begin = "BEGIN IMMEDIATE TRANSACTION"
        case commit = "COMMIT TRANSACTION"

        package func run(_ db: Database) throws { try db.cachedStatement(sql: rawValue).execute() }
    }

    /// The most writes one transaction takes; the rest go into the next, after the writer's queue has
    /// served whatever else waits on it (compaction, tokens, the console).
    package static let largestGroup = 64

    private let writer: WriterLane
    /// Of the lone writes that could go in place, the one in this many that goes to the writer's
    /// queue instead, to learn whether writes still come alone.
    package static let probeEvery = 8

    /// How many groups of one write in a row on the writer's queue, after a group of several, let
    /// writes go in place again.
    package static let aloneAgainAfter = 4

    private struct State {
        var waiting: [Pending] = []
        /// A group is being written (in place or on the writer's queue).
        var writing = false
        /// Writes come alone: one that finds the writer idle may go in place.
        var alone = true
        /// Groups of one write in a row on the writer's queue.
        var loneQueuedGroups = 0
        /// Writes committed in place since the last group went to the writer's queue.
        var inPlaceSinceQueued = 0

        /// Whether a write that finds the writer idle should try it in place.
        var goesInPlace: Bool { alone && inPlaceSinceQueued < GroupCommit.probeEvery - 1 }

        mutating func took(_ group: Int, inPlace: Bool) {
            if inPlace {
                inPlaceSinceQueued += 1
                return
            }
            inPlaceSinceQueued = 0
            loneQueuedGroups = group > 1 ? 0 : loneQueuedGroups + 1
            if group > 1 { alone = false } else if loneQueuedGroups >= GroupCommit.aloneAgainAfter { alone = true }
        }
    }
    private let state = Mutex(State())

    package init(writer: WriterLane) {
        self.writer = writer
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
        let start = state.withLock { state -> (starts: Bool, inPlace: Bool) in
            state.waiting.append(pending)
            guard !state.writing else { return (false, false) }
            state.writing = true
            return (true, state.goesInPlace)
        }
        guard start.starts else { return }
        if !start.inPlace || writer.inPlace({ db in self.writeGroup(db, inPlace: true) }) == nil { scheduleGroup() }
    }

    private func scheduleGroup() {
        writer.asyncWriteWithoutTransaction { db in self.writeGroup(db, inPlace: false) }
    }

    /// One transaction for the writes waiting now; then the next group, if any arrived meanwhile.
    private func writeGroup(_ db: Database, inPlace: Bool) {
        var group = state.withLock { state in
            let group = Array(state.waiting.prefix(Self.largestGroup))
            state.waiting.removeFirst(group.count)
            state.took(group.count, inPlace: inPlace)
            return group
        }
        while !group.isEmpty {
            switch commit(group, db, waitingForLock: !inPlace) {
            case .committed, .failed:
                group = []
            case .partlyWritten(let index, let answer):
                // Undone with the rest of its transaction; the others go again without it.
                answer(nil)
                group.remove(at: index)
            case .lockHeld:
                // Another connection writes: wait for it on the writer's queue, first in line.
                let waiting = group
                state.withLock { $0.waiting.insert(contentsOf: waiting, at: 0) }
                scheduleGroup()
                return
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
        /// Another connection held SQLite's write lock and the group was not to wait for it; nothing
        /// ran and nobody was answered.
        case lockHeld
    }

    /// Runs `group` in one transaction and answers its writes, unless one of them throws after
    /// changing something: then the transaction is rolled back and nobody is answered but that write.
    /// Unless `waitingForLock`, a write lock held by another connection ends it at once (`lockHeld`)
    /// rather than after the connection's busy timeout.
    private func commit(_ group: [Pending], _ db: Database, waitingForLock: Bool) -> GroupEnd {
        var answers: [@Sendable ((any Error)?) -> Void] = []
        answers.reserveCapacity(group.count)
        do {
            do {
                try waitingForLock ? Bracket.begin.run(db) : db.withoutBusyWait { try Bracket.begin.run($0) }
            } catch let error as DatabaseError where !waitingForLock && error.resultCode == .SQLITE_BUSY {
                return .lockHeld
            }
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
                try Bracket.commit.run(db)
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
