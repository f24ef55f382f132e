import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

/// The sync loop apps run (``SyncClient/run()``) on the live stream that carries changes, against a
/// real server on a loopback port: changes arrive on the stream, merged, with no pull per change;
/// a change made at any moment — before the stream opens, while it opens, after it dropped — arrives.
@Suite struct LiveStreamSyncTests {
    struct Dismissable: Tip {
        var id: String { "dismissable" }
        var title: String { "Dismiss me" }
    }

    /// URLSession underneath; counts requests by route and lets a test act when a stream opens.
    final class WatchedTransport: SyncTransport {
        let inner: URLSessionTransport
        let requests = Mutex<[String]>([])
        let beforeStream: @Sendable (Int) async throws -> Void
        let streams = Atomic<Int>(0)

        init(port: Int, beforeStream: @escaping @Sendable (Int) async throws -> Void = { _ in }) {
            inner = URLSessionTransport(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
            self.beforeStream = beforeStream
        }

        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            requests.withLock { $0.append(String(request.path.prefix { $0 != "?" })) }
            return try await inner.send(request)
        }

        func stream(_ request: SyncHTTPRequest) async throws -> SyncHTTPStream? {
            let index = streams.add(1, ordering: .relaxed).newValue
            try await beforeStream(index)
            requests.withLock { $0.append(String(request.path.prefix { $0 != "?" })) }
            return try await inner.stream(request)
        }

        func count(_ path: String) -> Int { requests.withLock { $0.filter { $0 == path }.count } }
    }

    /// Sleeps that pass only when the test lets time pass: ``letOneThrough()`` ends one wait (the
    /// one waiting now, or the next to come); after ``open()`` every wait passes at once.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, permits: Int, waiting: [CheckedContinuation<Void, Never>])>(
            (false, 0, []))

        func wait() async {
            await withCheckedContinuation { continuation in
                let passes = state.withLock { state in
                    if state.open { return true }
                    if state.permits > 0 {
                        state.permits -= 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if passes { continuation.resume() }
            }
        }

        /// Waits that are waiting now.
        var waiting: Int { state.withLock { $0.waiting.count } }

        func letOneThrough() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiting.isEmpty else {
                    state.permits += 1
                    return nil
                }
                return state.waiting.removeFirst()
            }
            waiter?.resume()
        }

        func open() {
            let waiting = state.withLock { state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    func client(_ replica: TipsReplica, _ fixture: ServerFixture, transport: any SyncTransport) -> SyncClient {
        var configuration = SyncConfiguration(
            server: URL(string: "http://127.0.0.1:1")!, token: fixture.tokens[replica.deviceID]!)
        configuration.transport = transport
        return SyncClient(replica: replica, configuration: configuration, transport: transport)
    }

    /// Closes tip `id` on `replica` (a change to sync).
    func close(_ id: String, on replica: TipsReplica) throws {
        try replica.invalidate(tip: id, reason: .tipClosed)
    }

    /// A client over plain URLSession to the server on `port`.
    func client(_ replica: TipsReplica, _ fixture: ServerFixture, port: Int) -> SyncClient {
        client(replica, fixture, transport: URLSessionTransport(baseURL: URL(string: "http://127.0.0.1:\(port)")!))
    }

    /// Waits (without sleeping: each merge emits) until tip `id` is closed on `replica`.
    func until(_ replica: TipsReplica, closed id: String) async {
        var updates = replica.statusUpdates { TipDefinition(id: id, title: id) }.makeAsyncIterator()
        while let status = await updates.next(), status != .invalidated(.tipClosed) {}
    }

    @Test func changesArriveOnTheStreamWithoutAPullEach() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            let transport = WatchedTransport(port: port)
            let running = Task { try await client(laptop, fixture, transport: transport).run() }
            defer { running.cancel() }
            let phoneClient = client(phone, fixture, port: port)
            for value in Int64(1)...20 {
                try close("count-\(value)", on: phone)
                try await phoneClient.syncOnce()
                await until(laptop, closed: "count-\(value)")
            }
            var updates = Dismissable().statusUpdates(in: laptop).makeAsyncIterator()
            #expect(await updates.next() == .available)
            try Dismissable().invalidate(reason: .tipClosed, in: phone)
            try await phoneClient.syncOnce()
            #expect(await updates.next() == .invalidated(.tipClosed))
            // The first round's pull, then one stream for all 21 changes.
            #expect(transport.count("/v1/pull") == 1)
            #expect(transport.count("/v1/live") == 1)
        }
    }

    @Test func aChangeMadeWhileTheStreamOpensArrives() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            let phoneClient = client(phone, fixture, port: port)
            // After the laptop's round pulled, before its stream is open: the phone's change is stored.
            let transport = WatchedTransport(port: port) { index in
                guard index == 1 else { return }
                try close("late-7", on: phone)
                try await phoneClient.syncOnce()
            }
            let running = Task { try await client(laptop, fixture, transport: transport).run() }
            defer { running.cancel() }
            await until(laptop, closed: "late-7")
            #expect(transport.count("/v1/pull") == 1)
        }
    }

    @Test func aStreamThatDropsIsOpenedAgainAtTheCursorAndMissesNothing() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        let store = fixture.store
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: store, notifier: notifier))
        try await app.test(.live) { server in
            let port = try #require(server.port)
            let phoneClient = client(phone, fixture, port: port)
            // While the laptop has no stream (the first one was ended), the phone makes a change.
            let transport = WatchedTransport(port: port) { index in
                guard index == 2 else { return }
                try close("count-2", on: phone)
                try await phoneClient.syncOnce()
            }
            let running = Task { try await client(laptop, fixture, transport: transport).run() }
            defer { running.cancel() }
            try close("count-1", on: phone)
            try await phoneClient.syncOnce()
            await until(laptop, closed: "count-1")
            // (count-1 may have come with the first round's pull: wait for the stream itself.)
            while notifier.count == 0 { await Task.yield() }
            notifier.finishAll()  // as a restart or a JWT's expiry ends it
            await until(laptop, closed: "count-2")
            try close("count-3", on: phone)
            try await phoneClient.syncOnce()
            await until(laptop, closed: "count-3")
            #expect(transport.streams.load(ordering: .relaxed) == 2)
            #expect(transport.count("/v1/pull") == 1)
        }
    }

    /// protocol.md §17.3: a stream the server ended after it began (a restart, a JWT's expiry) is
    /// reopened after a delay drawn from 0 to the base — here a quarter (the injected draw) of a 2 s
    /// base — so that an instance's devices do not all return in the same instant. A change the
    /// device makes during that pause (a new point of the sync loop) is pushed all the same.
    @Test func aStreamTheServerEndedIsReopenedAfterAPauseWithinTheBase() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.live) { server in
            let port = try #require(server.port)
            let phoneClient = client(phone, fixture, port: port)
            let slept = Mutex<[Duration]>([])
            let sleptBeforeSecondStream = Mutex<[Duration]?>(nil)
            let (secondStream, secondStreamAsked) = AsyncStream.makeStream(of: Void.self)
            let transport = WatchedTransport(port: port) { index in
                guard index == 2 else { return }
                sleptBeforeSecondStream.withLock { $0 = slept.withLock { $0 } }
                secondStreamAsked.yield()
            }
            var configuration = SyncConfiguration(
                server: URL(string: "http://127.0.0.1:1")!, token: fixture.tokens["laptop"]!)
            configuration.initialBackoff = 2
            let laptopClient = SyncClient(
                replica: laptop, configuration: configuration, transport: transport,
                sleep: { duration in
                    // The silence watchdog's minute passes as a real (cancelled) wait; the rest are
                    // recorded, and during the first the laptop makes a change of its own.
                    if duration >= .seconds(60) {
                        try await Task.sleep(for: duration)
                    } else {
                        let first = slept.withLock { slept in
                            slept.append(duration)
                            return slept.count == 1
                        }
                        if first { try laptop.invalidate(tip: "from-laptop", reason: .tipClosed) }
                    }
                },
                jitter: { 0.25 })
            let running = Task { try await laptopClient.run() }
            defer { running.cancel() }
            try close("count-1", on: phone)
            try await phoneClient.syncOnce()
            await until(laptop, closed: "count-1")
            while notifier.count == 0 { await Task.yield() }
            #expect(slept.withLock { $0 }.isEmpty)
            notifier.finishAll()  // as a restart or a JWT's expiry ends it
            // The next change once the laptop asks for its second stream: pushed earlier, it could
            // reach the first before the server had ended it (seen under the suite's load).
            var asked = secondStream.makeAsyncIterator()
            await asked.next()
            try close("count-2", on: phone)
            try await phoneClient.syncOnce()
            await until(laptop, closed: "count-2")
            #expect(sleptBeforeSecondStream.withLock { $0 } == [.milliseconds(500)])
            #expect(transport.streams.load(ordering: .relaxed) == 2)
            // The change made during the pause reaches the phone, whose own loop now runs.
            let phoneRunning = Task { try await phoneClient.run() }
            defer { phoneRunning.cancel() }
            await until(phone, closed: "from-laptop")
        }
    }

    @Test func aPullBesideTheStreamReopensItAndLosesNothing() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            let phoneClient = client(phone, fixture, port: port)
            let transport = WatchedTransport(port: port)
            let laptopClient = client(laptop, fixture, transport: transport)
            let running = Task { try await laptopClient.run() }
            defer { running.cancel() }
            try close("count-1", on: phone)
            try await phoneClient.syncOnce()
            await until(laptop, closed: "count-1")
            // The app syncs by hand while the loop runs: its pull moves the cursor past the stream's.
            try close("count-2", on: phone)
            try await phoneClient.syncOnce()
            try await laptopClient.syncOnce()
            for value in Int64(3)...5 {
                try close("count-\(value)", on: phone)
                try await phoneClient.syncOnce()
            }
            await until(laptop, closed: "count-5")
            #expect(laptop.state.tips == phone.state.tips)
        }
    }

    @Test func aSilentStreamIsAbandonedAndOpenedAgain() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            let phoneClient = client(phone, fixture, port: port)
            let transport = WatchedTransport(port: port)
            // The watchdog's waits pass only when the test lets a minute pass, one at a time: were
            // every later minute to pass at once too, each new stream would be abandoned at once and
            // the loop would open streams as fast as the server accepts them (backoffs pass at once).
            let minutes = Gate()
            var configuration = SyncConfiguration(
                server: URL(string: "http://127.0.0.1:1")!, token: fixture.tokens["laptop"]!)
            configuration.liveStreamSilence = 60
            let laptopClient = SyncClient(
                replica: laptop, configuration: configuration, transport: transport,
                sleep: { duration in if duration >= .seconds(60) { await minutes.wait() } })
            let running = Task { try await laptopClient.run() }
            defer {
                running.cancel()
                minutes.open()  // the watchdog waiting now ends, and the cancelled loop with it
            }
            try close("count-1", on: phone)
            try await phoneClient.syncOnce()
            await until(laptop, closed: "count-1")
            // (count-1 may have come with the first round's pull: wait for the stream's watchdog.)
            while minutes.waiting == 0 { await Task.yield() }
            #expect(transport.streams.load(ordering: .relaxed) == 1)
            // Minutes pass one at a time, each once the watchdog waits for it, until one passes in
            // silence: the stream is taken for lost and a second one opens. (The minute the first
            // pieces arrived in is not silent: the watchdog may have begun before they came.)
            while transport.streams.load(ordering: .relaxed) < 2 {
                if minutes.waiting > 0 { minutes.letOneThrough() }
                await Task.yield()
            }
            try close("count-2", on: phone)
            try await phoneClient.syncOnce()
            await until(laptop, closed: "count-2")
            // The second stream was not abandoned in turn: its minute has not passed.
            #expect(transport.streams.load(ordering: .relaxed) == 2)
        }
    }

    @Test func aTransportThatCannotStreamLongPolls() async throws {
        struct PlainTransport: SyncTransport {
            let inner: URLSessionTransport
            func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse { try await inner.send(request) }
        }
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            let plain = PlainTransport(inner: URLSessionTransport(baseURL: URL(string: "http://127.0.0.1:\(port)")!))
            let running = Task { try await client(laptop, fixture, transport: plain).run() }
            defer { running.cancel() }
            try close("count-9", on: phone)
            try await client(phone, fixture, transport: plain).syncOnce()
            await until(laptop, closed: "count-9")
        }
    }
}
