import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncCore
import TipSyncServer
import TipSyncServerTestSupport

/// Faults made by others, from a Swift device's side (issue 72, item 4), against a real server: 30 s
/// of `500`s, 30 s of `503` with `Retry-After` (a proxy before the server), 30 s of connections
/// reset, 30 s of `401` (a server on the wrong database). Time is the client's own: its backoff and
/// `Retry-After` waits move a virtual clock the faults are read from, so nothing sleeps. After each,
/// the dismissal made on another device during the fault reaches the running device, and its status
/// said what happened while it happened.
@Suite struct ServerFaultsFromTheDeviceTests {
    enum Fault: Sendable, Equatable {
        case status(Int, code: String, retryAfter: Int?)
        case reset
    }

    /// The device's way to the server, with a fault in it until the virtual clock passes `until`.
    final class FaultyTransport: SyncTransport {
        let base: any SyncTransport
        private let state = Mutex<(now: Double, fault: Fault?, until: Double)>((0, nil, 0))

        init(base: any SyncTransport) {
            self.base = base
        }

        /// The client's waits: virtual time passes.
        func advance(by duration: Duration) {
            state.withLock {
                $0.now += Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            }
        }

        /// `fault` from now until ``end(after:)`` says when it ends; returns the client's time now.
        func inject(_ fault: Fault) -> Double {
            state.withLock {
                $0 = ($0.now, fault, .infinity)
                return $0.now
            }
        }

        /// The fault ends `seconds` of the client's time after `start`.
        func end(after seconds: Double, from start: Double) {
            state.withLock { $0.until = start + seconds }
        }

        var current: Fault? {
            state.withLock { $0.now < $0.until ? $0.fault : nil }
        }

        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            switch current {
            case .status(let status, let code, let retryAfter):
                let body = #"{"error":{"code":"\#(code)","message":"injected fault"}}"#
                var headers = ["content-type": "application/json"]
                if let retryAfter { headers["retry-after"] = String(retryAfter) }
                return SyncHTTPResponse(status: status, body: Data(body.utf8), headers: headers)
            case .reset:
                throw SyncClientError.unreachable("connection reset by peer")
            case nil:
                return try await base.send(request)
            }
        }
    }

    /// A client of `replica` that long-polls (each poll a request a fault can answer); its waits go
    /// through `sleep` (default: they pass at once).
    static func client(
        _ replica: TipsReplica, _ fixture: ServerFixture, _ url: URL, transport: (any SyncTransport)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { _ in }
    ) -> SyncClient {
        var configuration = SyncConfiguration(server: url, token: fixture.tokens[replica.deviceID]!)
        configuration.liveStream = false
        configuration.longPollSeconds = 1
        return SyncClient(replica: replica, configuration: configuration, transport: transport, sleep: sleep)
    }

    static let catalog =
        #"{"tips":[{"id":"t0","title":"0"},{"id":"t1","title":"1"},{"id":"t2","title":"2"},{"id":"t3","title":"3"}]}"#

    @Test func aRunningDeviceSyncsAgainAfterEachFault() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        for replica in [phone, laptop] { try replica.load(catalog: try Catalog(validating: Array(Self.catalog.utf8))) }
        try await fixture.app().test(.live) { server in
            let url = URL(string: "http://127.0.0.1:\(try #require(server.port))")!
            let faulty = FaultyTransport(base: SyncClient.defaultTransport(url))
            let phoneClient = Self.client(phone, fixture, url, transport: faulty) { faulty.advance(by: $0) }
            let laptopClient = Self.client(laptop, fixture, url)
            var updates = await phoneClient.statusUpdates().makeAsyncIterator()
            let running = Task { try await phoneClient.run() }
            defer { running.cancel() }
            func until(_ state: SyncState) async -> [SyncState] {
                var seen: [SyncState] = []
                while let status = await updates.next() {
                    if seen.last != status.state { seen.append(status.state) }
                    // A client that gave up says `stopped`: the expectations below then fail.
                    if status.state == state || status.state == .stopped { return seen }
                }
                return seen
            }
            #expect(await until(.connected).last == .connected)

            let faults: [(Fault, SyncState)] = [
                (.status(500, code: "server_error", retryAfter: nil), .refused),
                (.status(503, code: "server_error", retryAfter: 1), .refused),
                (.reset, .offline),
                (.status(401, code: "unauthorized", retryAfter: nil), .refused),
            ]
            for (index, (fault, state)) in faults.enumerated() {
                // The fault lasts until the other device has pushed its dismissal, and 30 s of the
                // phone's time.
                let start = faulty.inject(fault)
                try laptop.invalidate(tip: "t\(index)", reason: .tipClosed)
                try await laptopClient.syncOnce()
                // The status says what happens while it happens, then that it syncs again.
                let during = await until(state)
                faulty.end(after: 30, from: start)
                let after = await until(.connected)
                #expect(during.last != nil && after.last == .connected, "\(fault): went through \(during + after)")
                // …and the page that carries the dismissal is merged (each merge moves the status).
                while phone.status(ofTip: "t\(index)") != .invalidated(.tipClosed), await updates.next() != nil {}
                #expect(phone.status(ofTip: "t\(index)") == .invalidated(.tipClosed), "\(fault)")
                let status = await phoneClient.status
                #expect(status.state == .connected && status.lastError == nil && status.nextAttemptAt == nil)
            }
        }
    }

    /// The device's clock jumps an hour ahead while it syncs: its next change is refused as
    /// `clock_skew`, the client corrects its clock and re-stamps, and both ways keep working — its
    /// dismissal reaches the other device, the other's reaches it, and no stamp stays an hour ahead.
    @Test func aRunningDeviceWhoseClockJumpsAnHourSyncsOn() async throws {
        final class JumpingClock: Sendable {
            let offset = Mutex(0.0)
            var clock: TipsClock { TipsClock { [self] in Date().addingTimeInterval(offset.withLock { $0 }) } }
        }
        let jumping = JumpingClock()
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone", clock: jumping.clock)
        let laptop = try makeDevice("laptop")
        for replica in [phone, laptop] { try replica.load(catalog: try Catalog(validating: Array(Self.catalog.utf8))) }
        try await fixture.app().test(.live) { server in
            let url = URL(string: "http://127.0.0.1:\(try #require(server.port))")!
            let phoneClient = Self.client(phone, fixture, url)
            let laptopClient = Self.client(laptop, fixture, url)
            var updates = await phoneClient.statusUpdates().makeAsyncIterator()
            let running = Task { try await phoneClient.run() }
            defer { running.cancel() }
            while let status = await updates.next(), status.state != .connected {}

            jumping.offset.withLock { $0 = 3600 }
            try phone.invalidate(tip: "t0", reason: .tipClosed)
            try await phoneClient.pushPending()
            #expect(
                try phone.localChanges().allSatisfy {
                    $0.hlc.milliseconds < UInt64(Date().timeIntervalSince1970 * 1000) + 300_000
                }, "re-stamped from the corrected clock")
            try await laptopClient.syncOnce()
            #expect(laptop.status(ofTip: "t0") == .invalidated(.tipClosed))
            try laptop.invalidate(tip: "t1", reason: .actionPerformed)
            try await laptopClient.syncOnce()
            while phone.status(ofTip: "t1") != .invalidated(.actionPerformed), await updates.next() != nil {}
            #expect(phone.status(ofTip: "t1") == .invalidated(.actionPerformed))
            #expect(await phoneClient.status.state == .connected)
        }
    }
}
