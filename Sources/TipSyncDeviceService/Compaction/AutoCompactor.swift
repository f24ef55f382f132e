import CoreMetrics
package import Logging
import ServiceLifecycle
import Synchronization
package import TipSyncServerBasics
package import TipSyncStorage

/// Compacts accounts in the background once their logs have grown by
/// ``ServerConfiguration/autoCompactAfter`` entries since their last compaction. Pushes report the
/// growth (``PushOutcome/entriesSinceCompaction``); one account is compacted at a time, each at most
/// once while queued, and compaction itself holds the write lock only to delete (``LogCompactor/compact(account:)``).
package final class AutoCompactor: Service, Sendable {
    let store: any SyncStore
    let threshold: Int
    let metrics: ServerMetrics
    let logger: Logger
    /// Told of every compaction: the work warms caches the server releases once quiet.
    let memory: MemoryRelease?
    private let queue: AsyncStream<Int64>
    private let enqueue: AsyncStream<Int64>.Continuation
    private let pending = Mutex<Set<Int64>>([])

    package init(
        store: any SyncStore, threshold: Int, metrics: ServerMetrics, logger: Logger, memory: MemoryRelease? = nil
    ) {
        self.store = store
        self.memory = memory
        self.threshold = threshold
        self.metrics = metrics
        self.logger = logger
        (queue, enqueue) = AsyncStream<Int64>.makeStream()
    }

    /// Called after every push that stored changes.
    func pushed(account: Int64, entriesSinceCompaction: Int64) {
        guard threshold > 0, entriesSinceCompaction >= Int64(threshold) else { return }
        if pending.withLock({ $0.insert(account).inserted }) { enqueue.yield(account) }
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            for await account in self.queue {
                await self.compact(account)
            }
        }
    }

    /// Compacts one account now (the service's loop; tests call it directly).
    func compact(_ account: Int64) async {
        defer { _ = pending.withLock { $0.remove(account) } }
        do {
            let dropped = try await LogCompactor(store: store).compact(account: account)
            memory?.noteActivity()
            metrics.autoCompactions.increment()
            metrics.compactedEntries.increment(by: dropped)
            logger.debug("compacted", metadata: ["account": "\(account)", "dropped": "\(dropped)"])
        } catch {
            logger.warning("automatic compaction failed", metadata: ["account": "\(account)", "error": "\(error)"])
        }
    }

    /// Accounts waiting to be compacted (tests).
    var queued: Set<Int64> { pending.withLock { $0 } }
}
