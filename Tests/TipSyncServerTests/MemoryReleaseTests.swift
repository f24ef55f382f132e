import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Logging
import Prometheus
import Synchronization
import Testing
import TipSync
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// When a burst of requests is over (an interval with a tenth or less of the busiest interval's
/// requests), the server frees what refills on demand (SQLite's caches, rate-limit buckets of quiet
/// devices) and glibc's free pages. The service's loop only sleeps and ticks; the tests tick by hand.
@Suite struct MemoryReleaseTests {
    @Test func releasesOnceWhenABurstIsOverAndNotDuringSteadyTraffic() async throws {
        let fixture = try await ServerFixture.make()
        let registry = PrometheusCollectorRegistry()
        let memory = MemoryRelease(
            interval: .seconds(30), store: fixture.store, logger: Logger(label: "test"),
            factory: PrometheusMetricsFactory(registry: registry), continuationsSettle: .zero)
        let forgotten = Mutex(0)
        memory.onRelease { forgotten.withLock { $0 += 1 } }
        let tokens = TokenIdentityCache()
        let router = buildRouter(
            store: fixture.store, configuration: ServerConfiguration(), notifier: ChangeNotifier(),
            activity: DeviceActivity(), jwt: nil, compactor: nil, memory: memory, registry: registry,
            metrics: ServerMetrics(registry: registry), tokens: tokens, readiness: Readiness(missing: []),
            now: { Int64(Date().timeIntervalSince1970 * 1000) })
        // A server that has served nothing has nothing to give back.
        #expect(await memory.tick() == false)

        try await Application(router: router).test(.router) { client in
            func pull(_ count: Int) async throws {
                for _ in 0..<count {
                    try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")) {
                        #expect($0.status == .ok)
                    }
                }
            }
            // Monitoring is not traffic.
            for _ in 0..<5 {
                try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            }
            #expect(await memory.tick() == false)

            let changes = (1...50).map { change("phone", Int64($0), .parameter(id: "p\($0)", value: .int($0))) }
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: changes))
            ) { #expect($0.status == .ok) }
            try await pull(19)
            // The burst's interval (20 requests), then one as busy: no release.
            #expect(await memory.tick() == false)
            try await pull(20)
            #expect(await memory.tick() == false)
            #expect(forgotten.withLock { $0 } == 0)
            // Traffic falls to a trickle (2 of 20): released, once. The devices' remembered tokens
            // go too (a burst of 5,000 devices left a megabyte of them, round after round).
            try await pull(2)
            #expect(tokens.count == 2)
            #expect(await memory.tick() == true)
            #expect(forgotten.withLock { $0 } == 1)
            #expect(tokens.count == 0)
            // A steady trickle afterwards: nothing more to release.
            for _ in 0..<3 {
                try await pull(2)
                #expect(await memory.tick() == false)
            }

            // Released caches refill on demand: the next pull reads every change.
            try await client.execute(uri: "/v1/pull?limit=100", method: .get, headers: fixture.headers("laptop")) {
                response in
                #expect(response.status == .ok)
                let page = try decode(PullResponse.self, response.body)
                #expect(page.changes.count == 50)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(String(buffer: response.body).contains("tipsync_memory_releases_total 1"))
            }
            // Another burst, then silence: a second release.
            try await pull(20)
            #expect(await memory.tick() == false)
            #expect(await memory.tick() == true)
            #expect(forgotten.withLock { $0 } == 2)
        }
    }

    /// GRDB's `releaseMemory()` blocks its thread until every reader is back in the pool, and a
    /// reader goes back from the task that used it, on Swift's cooperative threads. Called on a
    /// cooperative thread while a read was in flight, it could take the last free one: the read never
    /// finished and the process hung (the likely reason a CI run of the whole suite never ended). Here the pool has one
    /// thread, so the old code hangs every time; the release must wait for the read, not block it.
    @Test func releasingMemoryWaitsForReadsWithoutHoldingTheirThread() async throws {
        let directory = Scratch.path("tipsync")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteSyncStore(path: directory.appendingPathComponent("server.sqlite").path)
        try await store.migrate()
        let executor = OneThreadExecutor()
        defer { executor.shutdown() }
        let gate = DispatchSemaphore(value: 0)

        let answer = try await withTaskExecutorPreference(executor) {
            let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
            // A read that holds its reader until the gate opens (on the reader's own queue).
            async let read = store.pool.read { db in
                enteredContinuation.yield()
                gate.wait()
                return try Int.fetchOne(db, sql: "SELECT 42") ?? 0
            }
            for await _ in entered { break }
            // The read's task resumes on this executor's only thread, which is this task's until it
            // suspends: opening the gate now lets the read finish only if the release suspends.
            gate.signal()
            // Through the protocol, as `MemoryRelease` calls it.
            await (store as any SyncStore).releaseMemory()
            return try await read
        }
        #expect(answer == 42)
    }

    /// A drain sends every block it promised, in chunks it waits for, from several tasks at once, and
    /// comes back (it runs on the server's threads while the server is quiet; it must never stall).
    @Test func drainingTheContinuationCachesRunsEveryBlockInBoundedChunks() async {
        #expect(await DispatchContinuationCache.drain(tasks: 3, perTask: 2_500, chunk: 1_000) == 7_500)
        #expect(await DispatchContinuationCache.drain(tasks: 2, perTask: 7, chunk: 0) == 14)
        #expect(await DispatchContinuationCache.drain(tasks: 0, perTask: 100) == 0)
    }

    @Test func aReleaseForgetsOnlyTheRateLimitBucketsThatHaveRefilled() {
        let limiter = RateLimiter<DeviceIdentity>(RateLimit(perSecond: 10, burst: 20))
        let quiet = DeviceIdentity(accountID: 1, device: "quiet")
        let busy = DeviceIdentity(accountID: 1, device: "busy")
        #expect(limiter.take(quiet, cost: 1, now: 0) == nil)
        #expect(limiter.take(busy, cost: 20, now: 900) == nil)
        // At 1 s the quiet device's bucket is full again (what a device never seen gets); the busy
        // one has 1 of 20 back and must keep owing the rest.
        limiter.forgetRefilled(now: 1000)
        #expect(limiter.trackedDevices == 1)
        #expect(limiter.take(busy, cost: 5, now: 1000) != nil)
        #expect(limiter.take(quiet, cost: 20, now: 1000) == nil)
    }

    /// The load benchmark tells a leak (the live heap grows) from memory the allocator keeps, using
    /// the totals `malloc_info` prints after the last arena.
    @Test func heapStatisticsAreReadFromTheTotalsAfterTheLastArena() throws {
        let xml = """
            <malloc version="1">
            <heap nr="0">
            <total type="fast" count="9" size="999"/>
            <system type="current" size="99999"/>
            </heap>
            <total type="fast" count="2" size="96"/>
            <total type="rest" count="5" size="40000"/>
            <total type="mmap" count="1" size="200000"/>
            <system type="current" size="1000000"/>
            <system type="max" size="3000000"/>
            </malloc>
            """
        let statistics = try #require(HeapStatistics(mallocInfo: xml))
        #expect(statistics == HeapStatistics(inUse: 1_000_000 - 96 - 40_000 + 200_000, held: 1_200_000))
        #expect(HeapStatistics(mallocInfo: "<malloc version=\"1\"></malloc>") == nil)
        // Where glibc's `malloc` serves this process its live heap is at most what it holds; where
        // mimalloc does (linked with the server, as the test binary is), glibc's figures are not the
        // process's and none are given.
        #if canImport(Glibc)
            if SystemAllocator.name == "glibc" {
                let own = try #require(SystemAllocator.heapStatistics())
                #expect(own.inUse > 0 && own.inUse <= own.held)
            } else {
                #expect(SystemAllocator.name.hasPrefix("mimalloc "))
                #expect(SystemAllocator.heapStatistics() == nil)
            }
        #endif
    }
}
