import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncCore
import TipSyncServer
import TipSyncServerTestSupport

/// The sync client needs nothing of a replica but its sync face (``SyncedReplica``): a replica
/// kept in memory — a `ReplicaState`, its own log, the bookkeeping, and no database — syncs with a
/// `TipsReplica` through a real server, both ways, and the two end equal.
@Suite struct SyncedReplicaTests {
    /// A replica in memory that keeps the sync face's promises for what these tests do: it makes
    /// changes, pushes them, pulls, merges, learns its account and follows the catalog. It does not
    /// repair a log (set aside, new stamps): asked to, it throws, and a test that reached them fails.
    final class MemoryReplica: SyncedReplica {
        struct Unsupported: Error {}
        struct Inner {
            var state = ReplicaState()
            var log: [Change] = []
            var progress = SyncProgress()
            var hlc = HybridLogicalClock()
            var account: String?
            var catalogTag: String?
            var subscribers: [UInt64: AsyncStream<Void>.Continuation] = [:]
        }

        let deviceID: String
        let clock: TipsClock
        private let inner = Mutex(Inner())

        /// Yields after each pulled page is merged.
        let merges: AsyncStream<Void>
        private let merged: AsyncStream<Void>.Continuation

        init(deviceID: String, clock: TipsClock = .system) {
            self.deviceID = deviceID
            self.clock = clock
            (merges, merged) = AsyncStream<Void>.makeStream()
        }

        var state: ReplicaState { inner.withLock { $0.state } }
        private var nowMilliseconds: Int64 {
            Int64(clock.now().timeIntervalSince1970 * 1000) + inner.withLock { $0.progress.clockOffset }
        }

        /// A local change: stamped, logged, merged, and the push loop told.
        func make(_ operation: Change.Operation) {
            let now = nowMilliseconds
            let subscribers = inner.withLock { inner -> [AsyncStream<Void>.Continuation] in
                let change = Change(
                    device: deviceID, seq: Int64(inner.log.count) + 1,
                    hlc: inner.hlc.tick(physicalMilliseconds: UInt64(max(0, now))), operation: operation)
                inner.log.append(change)
                _ = inner.state.apply(change)
                return Array(inner.subscribers.values)
            }
            for subscriber in subscribers { subscriber.yield() }
        }

        var syncProgress: SyncProgress { inner.withLock { $0.progress } }
        func updateSyncProgress<Result>(_ update: (inout SyncProgress) throws -> Result) throws -> Result {
            try inner.withLock { try update(&$0.progress) }
        }
        var clockOffset: Int64 { syncProgress.clockOffset }
        var hasSynced: Bool { syncProgress.hasSynced }
        var isHeldForFirstSync: Bool { syncProgress.firstSyncHold.holds(atMilliseconds: nowMilliseconds) }
        func holdForFirstSync(seconds: Double) throws -> Bool {
            let until = nowMilliseconds + Int64(seconds * 1000)
            return inner.withLock { inner in
                guard !inner.progress.hasSynced, seconds > 0 else { return false }
                inner.progress.firstSyncHoldUntil = until
                return true
            }
        }

        var lastLocalSeq: Int64 { inner.withLock { Int64($0.log.count) } }
        func outbox(limit: Int, bytes: Int) throws -> [Change] {
            let unsent = inner.withLock { inner in
                Array(inner.log.dropFirst(Int(inner.progress.pushedSeq)).prefix(limit))
            }
            return Array(unsent.prefix(max(1, PushRequest.body(fitting: unsent, maxBodyBytes: bytes).count)))
        }
        func localChangeNotifications() -> AsyncStream<Void> {
            let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let id = UInt64.random(in: .min ... .max)
            inner.withLock { $0.subscribers[id] = continuation }
            continuation.onTermination = { [weak self] _ in
                self?.inner.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
            return stream
        }
        func continueDeviceLog(after highestSeq: Int64) throws {
            guard highestSeq > 0 else { return }
            try inner.withLock { inner in
                guard inner.log.isEmpty else { throw Unsupported() }
                inner.progress.setPushed(through: highestSeq)
            }
        }
        func setAsideUnsentChange(seq: Int64) throws -> Change? { throw Unsupported() }
        func restampUnacknowledgedChanges(keepingThrough keep: Int64) throws { throw Unsupported() }

        func applyRemote<Result: Sendable>(
            _ changes: [Change], updatingSyncProgress update: (inout SyncProgress) throws -> Result
        ) throws -> Result {
            let now = UInt64(max(0, nowMilliseconds))
            defer { merged.yield() }
            return try inner.withLock { inner in
                var progress = inner.progress
                let result = try update(&progress)
                for change in changes where change.device != deviceID {
                    inner.hlc.observe(change.hlc, physicalMilliseconds: now)
                    _ = inner.state.apply(change)
                }
                inner.progress = progress
                return result
            }
        }
        var account: String? { inner.withLock { $0.account } }
        var deviceContext: DeviceContext { DeviceContext(platform: "test", account: account) }
        func setAccount(_ name: String) throws { inner.withLock { $0.account = name } }
        var serverCatalogTag: String? { inner.withLock { $0.catalogTag } }
        func applyServerCatalog(_ text: Data, tag: String) throws -> Catalog {
            let catalog = try Catalog(validating: text)
            inner.withLock { $0.catalogTag = tag }
            return catalog
        }
    }

    /// A server, a `TipsReplica` phone and a `MemoryReplica` laptop of one account, each with its
    /// sync client, for `body` while the server runs.
    func withPhoneAndLaptop(
        _ body:
            @escaping @Sendable (ServerFixture, TipsReplica, MemoryReplica, SyncClient, SyncClient) async throws -> Void
    ) async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = MemoryReplica(deviceID: "laptop")
        try await fixture.app().test(.live) { server in
            let url = URL(string: "http://127.0.0.1:\(try #require(server.port))")!
            let phoneClient = SyncClient(
                replica: phone, configuration: SyncConfiguration(server: url, token: fixture.tokens["phone"]!))
            let laptopClient = SyncClient(
                replica: laptop, configuration: SyncConfiguration(server: url, token: fixture.tokens["laptop"]!))
            try await body(fixture, phone, laptop, phoneClient, laptopClient)
        }
    }

    @Test(.timeLimit(.minutes(5))) func aReplicaInMemorySyncsWithATipsReplicaThroughTheSyncFaceAlone() async throws {
        try await withPhoneAndLaptop { fixture, phone, laptop, phoneClient, laptopClient in
            #expect(laptop.isHeldForFirstSync, "a client starts the first-sync hold through the face")

            try phone.donate(event: "opened", infos: (0..<5).map { .int(Int64($0)) })
            try phone.invalidate(tip: "welcome", reason: .tipClosed)
            try await phoneClient.syncOnce()
            try await laptopClient.syncOnce()
            #expect(laptop.state == phone.state)
            #expect(laptop.hasSynced && !laptop.isHeldForFirstSync)
            #expect(laptop.account == "alice")

            // The laptop's own changes go out through its outbox.
            laptop.make(.eligibility(tip: "search", state: .invalidated(.actionPerformed)))
            laptop.make(.parameter(id: "isLoggedIn", value: .bool(true)))
            try await laptopClient.syncOnce()
            #expect(laptop.syncProgress.pushedSeq == 2)
            try await phoneClient.syncOnce()
            #expect(phone.state == laptop.state)
            #expect(try await fixture.store.highestSeq(account: fixture.accountID, device: "laptop") == 2)
        }
    }

    /// The loop apps run (`run()`: a live stream) over the face alone: a change the other device
    /// makes while it runs reaches the replica in memory.
    @Test(.timeLimit(.minutes(5))) func aRunningClientOverTheSyncFaceReceivesALiveChange() async throws {
        try await withPhoneAndLaptop { fixture, phone, laptop, phoneClient, laptopClient in
            let running = Task {
                do { try await laptopClient.run() } catch {
                    if !Task.isCancelled { Issue.record(error, "run() ended") }
                }
            }
            defer { running.cancel() }
            #expect(await laptopClient.waitForFirstSync(timeout: .seconds(120)))
            try phone.invalidate(tip: "welcome", reason: .tipClosed)
            try await phoneClient.syncOnce()
            // Waits for merges, not for time (the time limit turns a lost change into a failure).
            for await _ in laptop.merges where laptop.state == phone.state { break }
            #expect(laptop.state == phone.state)
        }
    }
}
