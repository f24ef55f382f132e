import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

/// A device's first sync (protocol.md §17.1): a device that joins an account after a tip was
/// dismissed elsewhere never shows it, nor counts a display of it; a device that cannot reach the
/// server still shows its tips once the bounded wait has passed.
@Suite struct FirstSyncTests {
    struct Welcome: Tip {
        var id: String { "welcome" }
        var title: String { "Welcome" }
        var options: [Option] { Tips.MaxDisplayCount(3) }
    }

    /// A transport whose pulls wait until the test opens the gate: the slowest network there is.
    final class GatedTransport: SyncTransport {
        let base: URLSessionTransport
        let opened = Mutex<Bool>(false)
        let waiters = Mutex<[CheckedContinuation<Void, Never>]>([])
        let pullsWaiting = AsyncStream<Void>.makeStream()

        init(port: Int) { base = URLSessionTransport(baseURL: URL(string: "http://127.0.0.1:\(port)")!) }

        func open() {
            opened.withLock { $0 = true }
            for waiter in waiters.withLock({ list in
                defer { list = [] }
                return list
            }) { waiter.resume() }
        }

        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            if request.path.hasPrefix("/v1/pull") {
                pullsWaiting.continuation.yield()
                await withCheckedContinuation { continuation in
                    let isOpen = opened.withLock { isOpen in isOpen }
                    if isOpen { continuation.resume() } else { waiters.withLock { $0.append(continuation) } }
                }
            }
            return try await base.send(request)
        }
    }

    func configuration(_ fixture: ServerFixture, device: String, port: Int) -> SyncConfiguration {
        var configuration = SyncConfiguration(
            server: URL(string: "http://127.0.0.1:\(port)")!, token: fixture.tokens[device]!)
        configuration.liveStream = false
        configuration.longPollSeconds = 1
        return configuration
    }

    @Test func aNewDeviceNeverShowsNorCountsATipDismissedElsewhere() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            try Welcome().invalidate(reason: .tipClosed, in: phone)
            try await SyncClient(replica: phone, configuration: configuration(fixture, device: "phone", port: port))
                .syncOnce()

            // Before sync is configured the new device knows nothing: the tip would show.
            #expect(Welcome().status(in: laptop) == .available)
            let gate = GatedTransport(port: port)
            // However long the pull takes: the bounded wait (its own test) must not end the hold here.
            var laptopConfiguration = configuration(fixture, device: "laptop", port: port)
            laptopConfiguration.firstSyncTimeout = 86_400
            let client = SyncClient(replica: laptop, configuration: laptopConfiguration, transport: gate)
            // From the moment its sync client exists, the tip is held back…
            #expect(laptop.isHeldForFirstSync)
            #expect(Welcome().status(in: laptop) == .pending)
            let seen = Mutex<[TipStatus]>([])
            let watching = Task {
                for await status in Welcome().statusUpdates(in: laptop) {
                    seen.withLock { $0.append(status) }
                    if status == .invalidated(.tipClosed) { return }
                }
            }
            let syncing = Task { try await client.syncOnce() }
            var waiting = gate.pullsWaiting.stream.makeAsyncIterator()
            _ = await waiting.next()
            // …while its first pull is on the way (as long as the network takes).
            #expect(Welcome().status(in: laptop) == .pending)
            #expect(await client.status.hasSynced == false)
            gate.open()
            try await syncing.value
            await watching.value
            #expect(Welcome().status(in: laptop) == .invalidated(.tipClosed))
            #expect(!laptop.isHeldForFirstSync)
            #expect(laptop.hasSynced)
            #expect(!seen.withLock { $0 }.contains(.available))
            #expect(laptop.displayTotals(ofTip: "welcome").count == 0)
        }
    }

    @Test func theHoldEndsWithTheFirstPullOnAnEmptyAccountToo() async throws {
        let fixture = try await ServerFixture.make()
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            let client = SyncClient(
                replica: laptop, configuration: configuration(fixture, device: "laptop", port: port))
            #expect(Welcome().status(in: laptop) == .pending)
            try await client.syncOnce()
            #expect(Welcome().status(in: laptop) == .available)
            #expect(await client.waitForFirstSync(timeout: .seconds(0)))
            let status = await client.status
            #expect(status.hasSynced && status.isConnected && !status.isHeldForFirstSync)
            #expect(status.pendingChanges == 0 && status.lastError == nil && status.lastSyncedAt != nil)
        }
    }

    @Test func aDeviceThatCannotReachTheServerShowsItsTipsAfterTheBoundedWait() async throws {
        let clock = TipSync.ManualClock()
        let phone = try makeDevice("phone", clock: clock.clock)
        var configuration = SyncConfiguration(server: URL(string: "http://127.0.0.1:1")!, token: "ts_nothing")
        configuration.firstSyncTimeout = 5
        let client = SyncClient(replica: phone, configuration: configuration, sleep: { _ in })
        var updates = Welcome().statusUpdates(in: phone).makeAsyncIterator()
        #expect(await updates.next() == .pending)
        await #expect(throws: SyncClientError.self) { try await client.syncOnce() }
        var status = await client.status
        #expect(!status.isConnected && !status.hasSynced && status.isHeldForFirstSync)
        #expect(status.lastError?.description.contains("unreachable") == true)
        clock.advance(by: 4.9)
        #expect(Welcome().status(in: phone) == .pending)
        clock.advance(by: 0.2)
        // Nothing answered: once the bounded wait has passed the tip shows, and observers are told
        // (status streams re-evaluate as time passes).
        #expect(Welcome().status(in: phone) == .available)
        #expect(await updates.next() == .available)
        status = await client.status
        #expect(!status.isHeldForFirstSync && !status.hasSynced)
        #expect(await client.waitForFirstSync(timeout: .seconds(1)) == false)
    }

    @Test func noHoldWithoutSyncOrWithATimeoutOfZero() async throws {
        let phone = try makeDevice("phone")
        #expect(Welcome().status(in: phone) == .available)
        var configuration = SyncConfiguration(server: URL(string: "http://127.0.0.1:1")!, token: "ts_x")
        configuration.firstSyncTimeout = 0
        _ = SyncClient(replica: phone, configuration: configuration)
        #expect(!phone.isHeldForFirstSync)
        #expect(Welcome().status(in: phone) == .available)
    }

    @Test func followingTheServerCatalogFollowsItsContent() async throws {
        struct Favorite: Tip {
            var id: String { "favorite" }
            var title: String { "Save as a Favorite" }
            var message: String? { "From the code" }
            var image: String? { "star" }
            var actions: [Action] { Action(id: "learn-more", title: "Learn More") }
        }
        let phone = try makeDevice("phone")
        #expect(Favorite().content(in: phone).title == "Save as a Favorite")
        let catalog = #"""
            {"tips":[{"id":"favorite","title":"Keep your favorites","message":"From the server","image":"heart",
            "actions":[{"id":"learn-more","title":"Tell me more"}]}]}
            """#
        try phone.applyServerCatalog(Data(catalog.utf8), tag: "\"v2\"")
        let content = Favorite().content(in: phone)
        #expect(content.title == "Keep your favorites")
        #expect(content.message == "From the server")
        #expect(content.image == "heart")
        #expect(content.actions == [ActionDefinition(id: "learn-more", title: "Tell me more")])
    }
}
