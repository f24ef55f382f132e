import CompressNIO
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

@Suite struct RateLimitAndCompactionTests {
    @Test func aFloodingDeviceGets429WithRetryAfterWhileOtherAccountsAreServed() async throws {
        let fixture = try await ServerFixture.make()
        let bobToken = try await {
            _ = try await fixture.store.createAccount(name: "bob")
            return try await CredentialIssuance(fixture.store).createToken(accountName: "bob", device: "phone")
        }()
        var configuration = ServerConfiguration()
        configuration.requestRate = RateLimit(perSecond: 5, burst: 10)
        configuration.rateRefusalDelay = .zero  // the refusals here are answered at once
        let clock = ManualServerClock(1_700_000_000_000)
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

    /// A request over its device's request rate is answered `429` only after
    /// ``ServerConfiguration/rateRefusalDelay``: a client that re-sends as soon as it is refused
    /// cannot make the server answer thousands of refusals a second (issue 59).
    @Test func aRefusalForTheRequestRateIsAnsweredAfterTheDelay() async throws {
        let fixture = try await ServerFixture.make()
        var configuration = ServerConfiguration()
        configuration.requestRate = RateLimit(perSecond: 0.001, burst: 1)
        configuration.rateRefusalDelay = .milliseconds(300)
        try await fixture.app(configuration: configuration).test(.router) { client in
            let clock = ContinuousClock()
            var started = clock.now
            try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) {
                #expect($0.status == .ok)
            }
            started = clock.now
            try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) {
                #expect($0.status == .tooManyRequests)
            }
            // A lower bound only: the answer cannot come sooner than the delay, however fast the machine.
            #expect(clock.now - started >= .milliseconds(300))
        }
    }

    @Test func aPushBeyondTheChangeBudgetIsRefusedWholeAndStoresNothing() async throws {
        let fixture = try await ServerFixture.make()
        var configuration = ServerConfiguration()
        configuration.changeRate = RateLimit(perSecond: 100, burst: 150)
        let clock = ManualServerClock(1_700_000_000_000)
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
            if request.path.hasPrefix("/v1/devices/") {  // first contact: a device the server has not seen
                return SyncHTTPResponse(status: 404, body: Data(#"{"error":{"code":"not_found","message":"m"}}"#.utf8))
            }
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

/// The work of a device's push bodies is budgeted in their decoded bytes (issue 59): one device
/// re-sending a 4 KB body that inflates to a 4 MB push made the server inflate and parse it again
/// and again, far inside its request budget, while every other device's requests waited.
@Suite struct BodyBudgetTests {
    static let start: Int64 = 1_700_000_000_000

    /// A valid single-change push whose JSON is about `bytes` long (padded with blanks), gzipped.
    static func gzippedPush(seq: Int64, device: String = "phone", bytes: Int) throws -> ByteBuffer {
        let json = try String(
            decoding: JSONCoding.encoder.encode(
                PushRequest(changes: [change(device, seq, .datastoreReset, ms: UInt64(start - 1000))])), as: UTF8.self)
        return try StrictInflationTests.compressed(
            json + String(repeating: " ", count: bytes - json.utf8.count), .gzip())
    }

    func headers(_ fixture: ServerFixture, _ device: String) -> HTTPFields {
        var headers = fixture.headers(device)
        headers[.contentEncoding] = "gzip"
        return headers
    }

    /// A body limit of 64 KiB and a body budget of 1,000 bytes a second, `burst` at once, on a clock
    /// the test moves.
    static func bodyBudget(burst: Double) -> (ServerConfiguration, ManualServerClock) {
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = 64 * 1024
        configuration.bodyByteRate = RateLimit(perSecond: 1000, burst: burst)
        return (configuration, ManualServerClock(start))
    }

    @Test func aDeviceInDebtIsRefusedBeforeItsNextBodyIsInflated() async throws {
        let fixture = try await ServerFixture.make()
        let (configuration, clock) = Self.bodyBudget(burst: 64 * 1024)
        try await fixture.app(configuration: configuration, now: { clock.now }).test(.router) { client in
            func push(_ body: ByteBuffer, _ device: String = "phone") async throws -> (HTTPResponse.Status, String?) {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: headers(fixture, device), body: body
                ) { ($0.status, $0.headers[.retryAfter]) }
            }
            // 60 KB decoded: within the burst.
            #expect(try await push(try Self.gzippedPush(seq: 1, bytes: 60_000)).0 == .ok)
            // Another 60 KB: paid for (its work is done) and stored; the bucket is 54,464 B in debt.
            #expect(try await push(try Self.gzippedPush(seq: 2, bytes: 60_000)).0 == .ok)
            // In debt, a body is refused before it is inflated: garbage gzip gets 429, not 400, and
            // Retry-After says when the debt is paid.
            let refused = try await push(ByteBuffer(bytes: [0x1F, 0x8B, 0, 1, 2, 3]))
            #expect(refused.0 == .tooManyRequests)
            #expect(refused.1 == "55")
            // Another device of the account has its own budget.
            #expect(try await push(try Self.gzippedPush(seq: 1, device: "laptop", bytes: 60_000), "laptop").0 == .ok)
            // Once out of debt the device pushes again.
            clock.advance(by: 55_000)
            #expect(try await push(try Self.gzippedPush(seq: 3, bytes: 1_000)).0 == .ok)
            #expect(try await fixture.store.highestSeq(account: fixture.accountID, device: "phone") == 3)
        }
    }

    /// Issue 74, item 2: a gzip bomb refused with 413 was charged to the request budget only, so one
    /// device sent 20–33 a second, each inflated to the body limit, beside everyone else. What it
    /// inflated is charged to the body budget: the third bomb is refused before it is inflated.
    @Test func aGzipBombIsChargedToTheBodyBudget() async throws {
        let fixture = try await ServerFixture.make()
        let (configuration, clock) = Self.bodyBudget(burst: 128 * 1024)
        let bomb = try StrictInflationTests.compressed(String(repeating: " ", count: 1 << 20), .gzip())
        try await fixture.app(configuration: configuration, now: { clock.now }).test(.router) { client in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<3 {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: headers(fixture, "phone"), body: bomb
                ) { statuses.append($0.status) }
            }
            #expect(statuses == [.contentTooLarge, .contentTooLarge, .tooManyRequests])
            // Another device is not charged for it.
            try await client.execute(
                uri: "/v1/push", method: .post, headers: headers(fixture, "laptop"), body: bomb
            ) { #expect($0.status == .contentTooLarge) }
        }
    }

    /// Issue 72, item 6: a push retried after its `Retry-After` was refused again every time — the
    /// budget refilled to less than the body, which was charged and refused again — so a device
    /// whose push is larger than a second of budget never drained its outbox.
    @Test func aPushRetriedAfterRetryAfterGoesThrough() async throws {
        let fixture = try await ServerFixture.make()
        let (configuration, clock) = Self.bodyBudget(burst: 64 * 1024)
        try await fixture.app(configuration: configuration, now: { clock.now }).test(.router) { client in
            func push(_ body: ByteBuffer) async throws -> (HTTPResponse.Status, String?) {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: headers(fixture, "phone"), body: body
                ) { ($0.status, $0.headers[.retryAfter]) }
            }
            #expect(try await push(try Self.gzippedPush(seq: 1, bytes: 64 * 1024 - 100)).0 == .ok)
            // The budget is spent: the next push waits, as long as Retry-After says, and no longer.
            let body = try Self.gzippedPush(seq: 2, bytes: 60_000)
            var attempts = 0
            var status = HTTPResponse.Status.tooManyRequests
            while status == .tooManyRequests, attempts < 10 {
                let answer = try await push(body)
                status = answer.0
                attempts += 1
                if status == .tooManyRequests {
                    let wait = try #require(answer.1.flatMap { Int($0) })
                    #expect(wait >= 1)
                    clock.advance(by: Int64(wait) * 1000)
                }
            }
            #expect(status == .ok)
            #expect(attempts <= 2)
            #expect(try await fixture.store.highestSeq(account: fixture.accountID, device: "phone") == 2)
        }
    }

    @Test func spendingGoesIntoDebtAndWaitSaysHowLong() {
        let limiter = RateLimiter<String>(RateLimit(perSecond: 100, burst: 1000))
        #expect(limiter.spend("a", cost: 900, now: 0) == nil)
        #expect(limiter.wait("a", now: 0) == nil)
        #expect(limiter.spend("a", cost: 400, now: 0) == 3)  // 300 in debt at 100 a second
        #expect(limiter.wait("a", now: 0) == 4)  // and one more unit before a request is allowed
        #expect(limiter.spend("a", cost: 5000, now: 0) == 10)  // a debt never passes the burst
        #expect(limiter.wait("a", now: 10_010) == nil)
        #expect(RateLimiter<String>(RateLimit(perSecond: 0, burst: 0)).spend("a", cost: 1e9, now: 0) == nil)
    }
}
