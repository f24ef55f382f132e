import Foundation
import Hummingbird
package import Logging
package import Metrics
import ServiceLifecycle
import Synchronization
import TipSyncServerBasics
package import TipSyncStorage

/// Gives memory back to the system once a burst of traffic is over: a burst of connections leaves
/// SQLite's page caches warm, idle reader connections open, rate-limit buckets and remembered tokens
/// (``TokenIdentityCache``) of devices that left, zlib streams kept for answers
/// (``ResponseDeflater``), and the allocator's heaps holding what was freed. Without this the server's
/// resident memory stays near its peak until the next burst reuses it.
///
/// It counts activity per `interval`: requests begun (not `/health` and `/metrics`: monitoring is
/// not traffic) and background work that reads or writes the logs (tip-usage summaries,
/// compactions, last-seen writes). It releases at the end of an interval whose activity fell to a
/// tenth or less of the busiest interval since the previous release: after a burst, within one or
/// two intervals of its end, also when a trickle of requests goes on. Steady traffic, or none at
/// all, releases nothing. Live streams that stay open are not activity; their memory is in use and
/// stays. ``ServerConfiguration/memoryReleaseInterval``.
///
/// A release also empties libdispatch's per-thread continuation caches
/// (``DispatchContinuationCache``) and trims once the thread holding them has exited
/// (`continuationsSettle` later): what those caches kept pinned most of the pages left after a burst.
package final class MemoryRelease: Service, Sendable {
    let interval: Duration
    let store: any SyncStore
    let logger: Logger
    let releases: Counter
    private struct State {
        /// Activity in the current interval.
        var activity: UInt64 = 0
        /// The most activity in one interval since the previous release.
        var busiest: UInt64 = 0
        var forget: [@Sendable () -> Void] = []
    }
    private let state = Mutex(State())

    /// How long a release waits after emptying the continuation caches before its last trim.
    let continuationsSettle: Duration

    /// `continuationsSettle`: ``DispatchContinuationCache/workerExit`` but in tests.
    package init(
        interval: Duration, store: any SyncStore, logger: Logger, factory: any MetricsFactory,
        continuationsSettle: Duration = DispatchContinuationCache.workerExit
    ) {
        self.interval = interval
        self.store = store
        self.logger = logger
        self.continuationsSettle = continuationsSettle
        releases = Counter(label: "tipsync_memory_releases_total", factory: factory)
    }

    /// Counts a request begun (the middleware calls this for every request) or a piece of
    /// background work done.
    func noteActivity() {
        state.withLock { $0.activity &+= 1 }
    }

    /// Adds something to drop at each release (a cache that refills on demand).
    package func onRelease(_ forget: @escaping @Sendable () -> Void) {
        state.withLock { $0.forget.append(forget) }
    }

    package func run() async throws {
        await Periodic.run(every: interval) { await self.tick() }
    }

    /// Ends an interval (the service's loop; tests call it directly). Returns whether it released.
    @discardableResult
    package func tick() async -> Bool {
        let forget: [@Sendable () -> Void]? = state.withLock { state in
            let current = state.activity
            state.activity = 0
            state.busiest = max(state.busiest, current)
            guard state.busiest > 0, current <= state.busiest / 10 else { return nil }
            state.busiest = 0
            return state.forget
        }
        guard let forget else { return false }
        let before = SystemAllocator.residentBytes()
        for release in forget { release() }
        await store.releaseMemory()
        // Enough tasks to reach every cooperative thread; each spends up to 20,000 of a thread's
        // cached continuations (after one burst of 5,000 devices the caches held ~2,000 in all).
        let drained = await DispatchContinuationCache.drain(
            tasks: 4 * ProcessInfo.processInfo.activeProcessorCount, perTask: 20_000)
        // One trim, once the thread holding the drained continuations has exited and freed them.
        try? await Task.sleep(for: continuationsSettle)
        SystemAllocator.trim()
        releases.increment()
        logger.debug(
            "traffic fell: released memory",
            metadata: [
                "resident_before_kib": "\(before / 1024)",
                "resident_after_kib": "\(SystemAllocator.residentBytes() / 1024)",
                "dispatch_continuations_drained": "\(drained)",
            ])
        return true
    }
}
