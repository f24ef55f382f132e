package import GRDB
import Synchronization

/// The one way to SQLite's writer: every write of the store goes through here, so the lane knows
/// whether anything holds or waits for the writer's queue.
///
/// That lets a write that finds the writer idle run on the thread that asks for it (``inPlace(_:)``:
/// GRDB's synchronous write, which libdispatch runs on the calling thread when the queue is free),
/// instead of a trip to the writer's queue and a wake-up back — most of what one device's
/// single-change push paid beyond the commit itself (issue 77, item 1). A write that finds the writer
/// held or asked for is not run in place, so the thread that asked (an event loop serving other
/// connections) never waits behind a compaction, an erasure or another group.
///
/// The rule that keeps it so: while a write runs in place, a queued write is handed to the writer's
/// queue only once it has ended (a queued write that reached the queue first would make the
/// in-place one wait on its thread).
package final class WriterLane: Sendable {
    /// The database; its writer is reached only through this lane.
    package let pool: DatabasePool
    private let state = Mutex(State())

    private struct State {
        /// Writes handed to the writer's queue (or about to be) that have not ended.
        var queued = 0
        /// A write is running in place.
        var inPlace = false
        /// Queued writes that arrived while a write ran in place, handed to the queue once it ends.
        var deferred: [@Sendable (Database) -> Void] = []
        /// Writes run in place and writes queued, since the lane opened (what tests observe).
        var inPlaceCount = 0
        var queuedCount = 0
    }

    package init(pool: DatabasePool) {
        self.pool = pool
    }

    /// Writes run in place and writes handed to the writer's queue, since the lane opened.
    package var counts: (inPlace: Int, queued: Int) { state.withLock { ($0.inPlaceCount, $0.queuedCount) } }

    /// Whether nothing holds or waits for the writer now.
    package var isIdle: Bool { state.withLock { $0.queued == 0 && !$0.inPlace } }

    /// Queued writes waiting for the write in place to end.
    package var deferredCount: Int { state.withLock { $0.deferred.count } }

    /// Runs `updates` with the writer's connection on this thread, outside any transaction, if
    /// nothing holds or waits for the writer; returns `nil` at once (without running it) otherwise.
    package func inPlace<T>(_ updates: (Database) throws -> T) rethrows -> T? {
        let claimed = state.withLock { state in
            guard state.queued == 0, !state.inPlace else { return false }
            state.inPlace = true
            state.inPlaceCount += 1
            return true
        }
        guard claimed else { return nil }
        defer {
            let deferred = state.withLock { state in
                state.inPlace = false
                defer { state.deferred = [] }
                return state.deferred
            }
            for work in deferred { dispatch(work) }
        }
        return try pool.writeWithoutTransaction(updates)
    }

    /// Hands `work` to the writer's queue, outside any transaction (after a write running in place,
    /// if one is).
    package func asyncWriteWithoutTransaction(_ work: @escaping @Sendable (Database) -> Void) {
        let now = state.withLock { state in
            state.queued += 1
            state.queuedCount += 1
            guard !state.inPlace else {
                state.deferred.append(work)
                return false
            }
            return true
        }
        if now { dispatch(work) }
    }

    private func dispatch(_ work: @escaping @Sendable (Database) -> Void) {
        pool.asyncWriteWithoutTransaction { db in
            work(db)
            self.state.withLock { $0.queued -= 1 }
        }
    }

    /// Runs `updates` on the writer's queue outside any transaction, and returns what it returns.
    package func writeWithoutTransaction<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T)
        async throws -> T
    {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            asyncWriteWithoutTransaction { db in continuation.resume(with: Result { try updates(db) }) }
        }
    }

    /// Runs `updates` in a transaction on the writer's queue (GRDB's `write`), and returns what it
    /// returns once the transaction has committed; what it throws rolls the transaction back.
    package func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writeWithoutTransaction { db in
            var result: Result<T, any Error> = .failure(CancellationError())
            try db.inTransaction {
                result = .success(try updates(db))
                return .commit
            }
            return try result.get()
        }
    }

    /// Runs `body`, which takes the writer by GRDB's own means on this thread (a migration, releasing
    /// memory), counted as holding it: no write starts in place meanwhile. Not for an event loop's
    /// thread — it waits for the writer there.
    package func holding<T>(_ body: () throws -> T) rethrows -> T {
        state.withLock { $0.queued += 1 }
        defer { state.withLock { $0.queued -= 1 } }
        return try body()
    }
}
