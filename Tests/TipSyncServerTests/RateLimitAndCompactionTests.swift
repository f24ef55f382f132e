import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncServer

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let milliseconds: Mutex<Int64>
    init(_ start: Int64) { milliseconds = Mutex(start) }
    var now: Int64 { milliseconds.withLock { $0 } }
    func advance(by delta: Int64) { milliseconds.withLock { $0 += delta } }
}

@Suite struct RateLimitAndCompactionTests {
    @Test func aFloodingDeviceGets429WithRetryAfterWhileOtherAccountsAreServed() async throws {
        let fixture = try await ServerFixture.make()
        let bobToken = try await {
            _ = try await fixture.store.createAccount(name: "bob")
            return try await fixture.store.createToken(accountName: "bob", device: "phone")
        }()
        var configuration = ServerConfiguration()
        configuration.requestRate = RateLimit(perSecond: 5, burst: 10)
        let clock = ManualClock(1_700_000_000_000)
        try await fixture.app(configuration: configuration, now: { clock.now }).test(.router) { client in
            for _ in 0..<10 {
                try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) {
                    #expect($0.status == .ok)
                }
            }
            for _ in 0..<50 {
                try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) {
                    response in
                    #expect(response.status == .tooManyRequests)
                    #expect(response.headers[.retryAfter] == "1")
                    let error = try decode(ErrorBody.self, response.body).error
                    #expect(error.code == "rate_limited")
                }
            }
            // Another account (and another device of the same account) is served normally meanwhile.
            var bob = HTTPFields()
            bob[.authorization] = "Bearer \(bobToken)"
            try await client.execute(uri: "/v1/pull", method: .get, headers: bob) { #expect($0.status == .ok) }
            try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")) {
                #expect($0.status == .ok)
            }
            // A second later the device has 5 requests again, not more.
            clock.advance(by: 1000)
            for expected in [HTTPResponse.Status.ok, .ok, .ok, .ok, .ok, .tooManyRequests] {
                try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) {
                    #expect($0.status == expected)
                }
            }
        }
    }

    @Test func aPushBeyondTheChangeBudgetIsRefusedWholeAndStoresNothing() async throws {
        let fixture = try await ServerFixture.make()
        var configuration = ServerConfiguration()
        configuration.changeRate = RateLimit(perSecond: 100, burst: 150)
        let clock = ManualClock(1_700_000_000_000)
        let batch = (1...100).map { change("phone", Int64($0), .parameter(id: "p", value: .int($0)), ms: 1_600_000) }
        let next = (101...200).map { change("phone", Int64($0), .parameter(id: "p", value: .int($0)), ms: 1_600_000) }
        try await fixture.app(configuration: configuration, now: { clock.now }).test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: batch))
            ) { #expect($0.status == .ok) }
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: next))
            ) { response in
                #expect(response.status == .tooManyRequests)
                // 50 changes left, 100 asked, 100 a second: half a second, rounded up.
                #expect(response.headers[.retryAfter] == "1")
            }
            let count = try await fixture.store.logCount(account: fixture.accountID)
            #expect(count == 100)
            clock.advance(by: 1000)
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: next))
            ) { #expect($0.status == .ok) }
        }
    }

    @Test func anAccountIsCompactedInTheBackgroundOnceItsLogGrew() async throws {
        let fixture = try await ServerFixture.make()
        var configuration = ServerConfiguration()
        configuration.autoCompactAfter = 5
        // Each change overwrites the same parameter: all but the last are superseded.
        let changes = (1...6).map { change("phone", Int64($0), .parameter(id: "p", value: .int($0))) }
        try await fixture.app(configuration: configuration).test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: Array(changes.prefix(4))))
            ) { #expect($0.status == .ok) }
            // Below the threshold nothing happens; the push that crosses it queues the account.
            let before = try await fixture.store.accountDetails(name: "alice")
            #expect(before?.lastCompactionAt == nil && before?.entriesSinceCompaction == 4)
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: Array(changes.suffix(2))))
            ) { #expect($0.status == .ok) }
            // The compactor runs beside the request: wait for it without sleeping (bounded).
            let deadline = ContinuousClock.now + .seconds(30)
            while try await fixture.store.logCount(account: fixture.accountID) > 1, ContinuousClock.now < deadline {
                await Task.yield()
            }
            let after = try #require(try await fixture.store.accountDetails(name: "alice"))
            #expect(after.logEntries == 1 && after.lastCompactionAt != nil && after.entriesSinceCompaction == 0)
        }
    }
}

/// The Swift client: waits as long as `Retry-After` says, and refreshes an expired JWT.
@Suite struct SyncClientCredentialTests {
    /// Answers from a script, recording what it was sent.
    final class ScriptedTransport: SyncTransport {
        let script: Mutex<[@Sendable (SyncHTTPRequest) -> SyncHTTPResponse]>
        let sent = Mutex<[SyncHTTPRequest]>([])
        init(_ script: [@Sendable (SyncHTTPRequest) -> SyncHTTPResponse]) { self.script = Mutex(script) }
        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            sent.withLock { $0.append(request) }
            let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            return next?(request) ?? SyncHTTPResponse(status: 500, body: Data())
        }
    }

    static let emptyPage = SyncHTTPResponse(
        status: 200,
        body: Data(
            #"{"changes":[],"cursor":"g.0","generation":"g","highestSeq":0,"more":false,"serverTime":1700000000000,"snapshot":false}"#
                .utf8))

    static func error(_ status: Int, _ code: String, headers: [String: String] = [:]) -> SyncHTTPResponse {
        SyncHTTPResponse(
            status: status, body: Data(#"{"error":{"code":"\#(code)","message":"m"}}"#.utf8), headers: headers)
    }

    @Test func aRateLimitedRequestWaitsRetryAfterThenRetries() async throws {
        let transport = ScriptedTransport([
            { _ in Self.error(429, "rate_limited", headers: ["retry-after": "7"]) },
            { _ in Self.error(429, "rate_limited", headers: ["retry-after": "2"]) },
            { _ in Self.emptyPage },
        ])
        let slept = Mutex<[Duration]>([])
        let client = SyncClient(
            replica: try makeDevice("phone"),
            configuration: SyncConfiguration(server: URL(string: "http://127.0.0.1:1")!, token: "ts_x"),
            transport: transport, sleep: { duration in slept.withLock { $0.append(duration) } })
        try await client.pull()
        #expect(slept.withLock { $0 } == [.seconds(7), .seconds(2)])
        #expect(transport.sent.withLock { $0.count } == 3)
    }

    @Test func anExpiredTokenIsRefreshedFromTheProviderOnce() async throws {
        let transport = ScriptedTransport([
            { _ in Self.error(401, "token_expired") },
            { request in request.headers["Authorization"] == "Bearer jwt-2" ? Self.emptyPage : Self.error(401, "x") },
            { _ in Self.error(401, "token_expired") },
            { _ in Self.error(401, "token_expired") },
        ])
        let asked = Mutex(0)
        let configuration = SyncConfiguration(server: URL(string: "http://127.0.0.1:1")!) {
            let count = asked.withLock { count in
                count += 1
                return count
            }
            return "jwt-\(count)"
        }
        let client = SyncClient(replica: try makeDevice("phone"), configuration: configuration, transport: transport)
        try await client.pull()
        #expect(asked.withLock { $0 } == 2)
        #expect(transport.sent.withLock { $0.map { $0.headers["Authorization"] } } == ["Bearer jwt-1", "Bearer jwt-2"])
        // A provider whose fresh token is refused too: the refusal is reported, not retried for ever.
        await #expect(throws: SyncClientError.self) { try await client.pull() }
        #expect(asked.withLock { $0 } == 3)
    }
}
