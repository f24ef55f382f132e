import CompressNIO
import Foundation
import NIOCore
import Testing
import TipSyncCore
import TipSyncTestSupport

@testable import TipSyncServer

/// Single pushes answered on their connection's event loop (``PushFastPath``) must be answered as
/// the router answers them: the same status, headers and body for every push, the same store
/// afterwards, the same metrics; answers in the order requests came; and whatever the fast path
/// does not serve (a refusal, a revoked token, a body over the limit) answered by the router.
/// Each test drives a real server over plain sockets and keep-alive connections, and most drive
/// two — the fast path on and off — with the same requests and compare.
@Suite(.timeLimit(.minutes(5))) struct PushFastPathTests {
    /// The server's clock, fixed: answers carry it (`serverTime`), so both servers' answers compare.
    static let now: Int64 = 1_790_000_000_000

    struct Server {
        let server: LiveServer
        let fixture: ServerFixture

        static func start(fastPath: Bool, configuration: ServerConfiguration = ServerConfiguration()) async throws
            -> Server
        {
            let fixture = try await ServerFixture.make()
            let server = try await LiveServer.start(
                store: fixture.store, configuration: configuration, now: { PushFastPathTests.now },
                pushFastPath: fastPath)
            return Server(server: server, fixture: fixture)
        }

        func connection() async throws -> RawConnection {
            try await offPool { [port = server.port] in try RawConnection(port: port) }
        }

        /// Every change the account holds, as pulled from the start by another device.
        func log() async throws -> String {
            let pulled = try await RawConnection.exchange(
                port: server.port, method: "GET", path: "/v1/pull?cursor=0",
                headers: ["Authorization": "Bearer \(fixture.tokens["laptop"]!)"])
            return PushFastPathTests.normalized(String(decoding: pulled.body, as: UTF8.self))
        }
    }

    /// A push request's text, on a kept-alive connection.
    static func push(_ body: String, token: String, headers: [String] = []) -> String {
        String(decoding: push(bytes: Array(body.utf8), token: token, headers: headers), as: UTF8.self)
    }

    static func push(_ body: String, token: String, headers: [String] = []) -> [UInt8] {
        push(bytes: Array(body.utf8), token: token, headers: headers)
    }

    static func push(bytes body: [UInt8], token: String, headers: [String] = []) -> [UInt8] {
        var head = "POST /v1/push HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n"
        if !headers.contains(where: { $0.lowercased().hasPrefix("content-type:") }) {
            head += "Content-Type: application/json\r\n"
        }
        for header in headers { head += header + "\r\n" }
        return Array((head + "Content-Length: \(body.count)\r\n\r\n").utf8) + body
    }

    /// One change's JSON: a donation made a second ago, stamped `ms`.
    static func change(_ seq: Int64, device: String = "phone", ms: Int64 = now - 1000) -> String {
        #"{"device":"\#(device)","seq":\#(seq),"hlc":"\#(HLC(milliseconds: UInt64(ms), counter: 0))","#
            + #""kind":"donation","event":"opened","id":"\#(device):\#(seq)","date":\#(now - 1000)}"#
    }

    static func changes(_ list: String...) -> String { #"{"changes":[\#(list.joined(separator: ","))]}"# }

    /// The cursor generation differs from one database to another; everything else must not.
    static func normalized(_ text: String) -> String {
        text.replacingOccurrences(
            of: #""generation":"[0-9a-f]+""#, with: #""generation":"…""#, options: .regularExpression)
    }

    /// Status, headers but `Date`, and body: what must be equal on both paths.
    static func comparable(_ response: RawConnection.Response) -> String {
        let headers = response.headers.filter { !$0.hasPrefix("date:") }.sorted()
        return "\(response.status) \(headers) \(normalized(response.body))"
    }

    /// A kept-alive connection of the phone, whose token the server has cached: its first push
    /// (seq 1) was answered by the router.
    static func connectionWithCachedToken(_ server: Server) async throws -> (RawConnection, String) {
        let token = server.fixture.tokens["phone"]!
        let connection = try await server.connection()
        connection.send(Self.push(Self.changes(Self.change(1)), token: token))
        #expect(await connection.readResponses(1, within: 30).map(\.status) == [200])
        return (connection, token)
    }

    /// The requests of one kept-alive connection, sent one at a time: each answer read before the
    /// next request goes.
    static func exchange(_ requests: [[UInt8]], on server: Server) async throws -> [RawConnection.Response] {
        let connection = try await server.connection()
        var responses: [RawConnection.Response] = []
        for (index, request) in requests.enumerated() {
            connection.send(bytes: request)
            let answer = await connection.readResponses(1, within: 30)
            try #require(answer.count == 1, "no answer to request \(index)")
            responses.append(answer[0])
        }
        return responses
    }

    @Test func everyKindOfPushIsAnsweredAsTheRouterAnswersIt() async throws {
        let gzip = try StrictInflationTests.compressed(Self.changes(Self.change(5)), .gzip())
        func requests(_ token: String) -> [[UInt8]] {
            [
                // The first push fills the token cache (the router answers it); the rest may be fast.
                Self.push(Self.changes(Self.change(1)), token: token),
                Self.push(Self.changes(Self.change(2), Self.change(3)), token: token),
                Self.push(Self.changes(Self.change(3)), token: token),  // a duplicate
                Self.push(Self.changes(), token: token),
                Self.push(Self.changes(Self.change(4)), token: token, headers: ["Connection: keep-alive"]),
                Self.push(bytes: Array(gzip.readableBytesView), token: token, headers: ["Content-Encoding: gzip"]),
                Self.push(Self.changes(Self.change(6)), token: token, headers: ["Content-Type: text/plain"]),
                Self.push(#"{"changes":[{"device":"phone""#, token: token),
                Self.push(Self.changes(Self.change(6, device: "laptop")), token: token),
                Self.push(Self.changes(Self.change(8)), token: token),  // not consecutive with 5
                Self.push(Self.changes(Self.change(6), Self.change(8)), token: token),
                Self.push(Self.changes(Self.change(6, ms: Self.now + 3_600_000)), token: token),  // clock skew
                Self.push(Self.changes(Self.change(6)), token: token, headers: ["Origin: https://app.example.com"]),
                Self.push(Self.changes(Self.change(7)), token: "ts_unknown"),
                Self.push(Self.changes(Self.change(7)), token: token),
            ]
        }
        var configuration = ServerConfiguration()
        configuration.corsOrigins = ["https://app.example.com"]
        let fast = try await Server.start(fastPath: true, configuration: configuration)
        let router = try await Server.start(fastPath: false, configuration: configuration)
        let fastAnswers = try await Self.exchange(requests(fast.fixture.tokens["phone"]!), on: fast)
        let routerAnswers = try await Self.exchange(requests(router.fixture.tokens["phone"]!), on: router)
        #expect(
            fastAnswers.map(\.status) == [200, 200, 200, 200, 200, 200, 415, 400, 403, 409, 422, 422, 200, 401, 200])
        for (index, (fastAnswer, routerAnswer)) in zip(fastAnswers, routerAnswers).enumerated() {
            #expect(Self.comparable(fastAnswer) == Self.comparable(routerAnswer), "request \(index)")
        }
        #expect(try await fast.log() == router.log())
        // The fast path served some of them: the router's request metrics count them all the same.
        let pushes = #"hb_requests{http_route="/v1/push",http_request_method="POST",http_response_status_code="200"}"#
        #expect(fast.server.metric(pushes) == 8)
        #expect(fast.server.metric(pushes) == router.server.metric(pushes))
        // Which path answered: the first push (the token not yet cached), the compressed one and the
        // browser's went to the router, and the refusals; the other five were answered on the loop.
        #expect(fast.server.metric(#"tipsync_pushes_total{path="event_loop"}"#) == 5)
        #expect(fast.server.metric(#"tipsync_pushes_total{path="router"}"#) == 3)
        #expect(router.server.metric(#"tipsync_pushes_total{path="event_loop"}"#) == 0)
        #expect(router.server.metric(#"tipsync_pushes_total{path="router"}"#) == 8)
        await fast.server.stop()
        await router.server.stop()
    }

    /// One device's costly pushes stalled every other connection of the event loop (issue 59,
    /// item 1): the fast path inflated, parsed and checked a 4 KiB gzip body that inflates to 4 MiB on
    /// the loop, 45 times in 20 s, and others' p99 went from 13 ms to 1.4 s. The loop now parses only
    /// small, uncompressed bodies: every costly push — compressed, declared large, or chunked past
    /// the bound — is read and parsed in the router's task, and answered as before.
    @Test func costlyPushesAreParsedOffTheEventLoop() async throws {
        let server = try await Server.start(fastPath: true)
        let (connection, token) = try await Self.connectionWithCachedToken(server)
        let onLoop = #"tipsync_pushes_total{path="event_loop"}"#
        let byRouter = #"tipsync_pushes_total{path="router"}"#
        #expect(server.server.metric(byRouter) == 1)  // the first: its token was not cached yet

        // Small and plain: on the loop.
        connection.send(Self.push(Self.changes(Self.change(2)), token: token))
        #expect(await connection.readResponses(1, within: 30).map(\.status) == [200])
        #expect(server.server.metric(onLoop) == 1)

        // Compressed (however small), a declared length past the bound, and a chunked body that grows
        // past it: the router's.
        let gzip = try StrictInflationTests.compressed(Self.changes(Self.change(3)), .gzip())
        connection.send(
            bytes: Self.push(bytes: Array(gzip.readableBytesView), token: token, headers: ["Content-Encoding: gzip"]))
        #expect(await connection.readResponses(1, within: 30).map(\.status) == [200])
        let padding = String(repeating: " ", count: PushFastPath.largestBody)
        connection.send(Self.push(Self.changes(Self.change(4)) + padding, token: token))
        #expect(await connection.readResponses(1, within: 30).map(\.status) == [200])
        var chunked = "POST /v1/push HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n"
        chunked += "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        for piece in Array((Self.changes(Self.change(5)) + padding).utf8).chunked(into: 4096) {
            chunked += String(piece.count, radix: 16) + "\r\n" + String(decoding: piece, as: UTF8.self) + "\r\n"
        }
        connection.send(chunked + "0\r\n\r\n")
        #expect(await connection.readResponses(1, within: 30).map(\.status) == [200])
        #expect(server.server.metric(onLoop) == 1)
        #expect(server.server.metric(byRouter) == 4)
        #expect(try await server.fixture.store.highestSeq(account: server.fixture.accountID, device: "phone") == 5)
        await server.server.stop()
    }

    /// Requests sent back to back before any answer (HTTP/1.1 pipelining) are answered in order,
    /// whichever path serves each: a request the router serves waits for a push's answer before it.
    @Test func pipelinedRequestsAreAnsweredInTheOrderTheyCame() async throws {
        let server = try await Server.start(fastPath: true)
        let (connection, token) = try await Self.connectionWithCachedToken(server)
        let device = "GET /v1/devices/phone HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n\r\n"
        connection.send(
            Self.push(Self.changes(Self.change(2)), token: token) + device
                + Self.push(Self.changes(Self.change(3)), token: token) + device
                + "GET /health HTTP/1.1\r\nHost: t\r\n\r\n" + Self.push(Self.changes(Self.change(4)), token: token))
        let answers = await connection.readResponses(6, within: 30)
        #expect(answers.map(\.status) == [200, 200, 200, 200, 200, 200])
        guard answers.count == 6 else { return }
        #expect(answers[0].body.contains(#""highestSeq":2"#))
        #expect(answers[1].body.contains(#""highestSeq":2"#))
        #expect(answers[2].body.contains(#""highestSeq":3"#))
        #expect(answers[3].body.contains(#""highestSeq":3"#))
        #expect(answers[4].body.contains(#""status":"ok""#))
        #expect(answers[5].body.contains(#""highestSeq":4"#))
        // The first of them at least was answered on the event loop (a push read while the router
        // still owes an answer goes to the router, so how many depends on how the bytes were read).
        #expect((server.server.metric(#"tipsync_pushes_total{path="event_loop"}"#) ?? 0) >= 1)
        await server.server.stop()
    }

    /// While a push waits for its commit (the writer held here), requests behind it on its
    /// connection are not answered — not even one the router could answer at once.
    @Test func nothingOvertakesAPushWaitingForItsCommit() async throws {
        let server = try await Server.start(fastPath: true)
        let (connection, token) = try await Self.connectionWithCachedToken(server)
        let gate = DispatchSemaphore(value: 0)
        server.fixture.store.pool.asyncWriteWithoutTransaction { _ in gate.wait() }
        connection.send(
            Self.push(Self.changes(Self.change(2)), token: token) + "GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        // Nothing may come while the push cannot commit (a bounded look for an answer that must not exist).
        #expect(await connection.readResponses(1, within: 0.5).isEmpty)
        gate.signal()
        let answers = await connection.readResponses(2, within: 30)
        #expect(answers.map(\.status) == [200, 200])
        #expect(answers.first?.body.contains(#""highestSeq":2"#) == true)
        #expect(answers.last?.body.contains(#""status":"ok""#) == true)
        await server.server.stop()
    }

    /// A token revoked after the cache learned it: the push the fast path took fails in the store
    /// (which confirms the token), goes to the router, and is refused `401`; nothing is stored.
    @Test func aTokenRevokedAfterItWasCachedIsRefused() async throws {
        let server = try await Server.start(fastPath: true)
        let (connection, token) = try await Self.connectionWithCachedToken(server)
        _ = try await server.fixture.store.revokeTokens(accountName: "alice", device: "phone", at: Self.now)
        connection.send(Self.push(Self.changes(Self.change(2)), token: token))
        let refused = await connection.readResponses(1, within: 30)
        #expect(refused.map(\.status) == [401])
        #expect(refused.first?.body.contains(#""code":"unauthorized""#) == true)
        #expect(try await server.fixture.store.highestSeq(account: server.fixture.accountID, device: "phone") == 1)
        await server.server.stop()
    }

    /// A chunked body past the limit (no `Content-Length` to refuse it by) is handed to the router
    /// part way, which refuses it `413` as it refuses any.
    @Test func aBodyPastTheLimitIsRefusedAsTooLarge() async throws {
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = 2048
        let server = try await Server.start(fastPath: true, configuration: configuration)
        let (connection, token) = try await Self.connectionWithCachedToken(server)
        let large = Self.changes((2...40).map { Self.change(Int64($0)) }.joined(separator: ","))
        var chunked = "POST /v1/push HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n"
        chunked += "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        for piece in Array(large.utf8).chunked(into: 500) {
            chunked += String(piece.count, radix: 16) + "\r\n" + String(decoding: piece, as: UTF8.self) + "\r\n"
        }
        connection.send(chunked + "0\r\n\r\n")
        let refused = await connection.readResponses(1, within: 30)
        #expect(refused.map(\.status) == [413])
        #expect(try await server.fixture.store.highestSeq(account: server.fixture.accountID, device: "phone") == 1)
        await server.server.stop()
    }

    /// The device's request and change budgets hold on both paths: refused pushes are answered
    /// `429` with `Retry-After` by the router, and nothing the fast path did spent them twice.
    /// A push the store refused (`409 sequence_gap`) was charged twice on the fast path — once by the
    /// fast path, again by the router that answered it — so the next push got `429` where the router
    /// alone answered `200` (issue 59, item 4).
    @Test func aRefusedPushIsChargedOnceOnEitherPath() async throws {
        var configuration = ServerConfiguration()
        configuration.requestRate = RateLimit(perSecond: 0.001, burst: 3)
        configuration.rateRefusalDelay = .zero  // the refusals here are answered at once
        configuration.changeRate = RateLimit(perSecond: 0.001, burst: 3)
        func requests(_ token: String) -> [[UInt8]] {
            [
                Self.push(Self.changes(Self.change(1)), token: token),
                Self.push(Self.changes(Self.change(5)), token: token),  // a gap: 409, stores nothing
                Self.push(Self.changes(Self.change(2)), token: token),  // the third request, the third change
            ]
        }
        let fast = try await Server.start(fastPath: true, configuration: configuration)
        let router = try await Server.start(fastPath: false, configuration: configuration)
        let fastAnswers = try await Self.exchange(requests(fast.fixture.tokens["phone"]!), on: fast)
        let routerAnswers = try await Self.exchange(requests(router.fixture.tokens["phone"]!), on: router)
        #expect(routerAnswers.map(\.status) == [200, 409, 200])
        #expect(fastAnswers.map(\.status) == [200, 409, 200])
        for (index, (fastAnswer, routerAnswer)) in zip(fastAnswers, routerAnswers).enumerated() {
            #expect(Self.comparable(fastAnswer) == Self.comparable(routerAnswer), "request \(index)")
        }
        await fast.server.stop()
        await router.server.stop()
    }

    @Test func rateLimitsRefuseTheSamePushesOnBothPaths() async throws {
        var configuration = ServerConfiguration()
        configuration.requestRate = RateLimit(perSecond: 0.001, burst: 4)
        configuration.rateRefusalDelay = .zero  // the refusals here are answered at once
        configuration.changeRate = RateLimit(perSecond: 0.001, burst: 5)
        func requests(_ token: String) -> [[UInt8]] {
            [
                Self.push(Self.changes(Self.change(1)), token: token),
                Self.push(Self.changes(Self.change(2), Self.change(3)), token: token),
                Self.push(Self.changes(Self.change(4), Self.change(5), Self.change(6)), token: token),  // 6 > 5
                Self.push(Self.changes(Self.change(4)), token: token),
                Self.push(Self.changes(Self.change(5)), token: token),
                Self.push(Self.changes(Self.change(6)), token: token),  // the fifth request
            ]
        }
        let fast = try await Server.start(fastPath: true, configuration: configuration)
        let router = try await Server.start(fastPath: false, configuration: configuration)
        let fastAnswers = try await Self.exchange(requests(fast.fixture.tokens["phone"]!), on: fast)
        let routerAnswers = try await Self.exchange(requests(router.fixture.tokens["phone"]!), on: router)
        #expect(fastAnswers.map(\.status) == [200, 200, 429, 200, 429, 429])
        #expect(fast.server.metric(#"tipsync_pushes_total{path="event_loop"}"#) == 2)
        for (index, (fastAnswer, routerAnswer)) in zip(fastAnswers, routerAnswers).enumerated() {
            #expect(Self.comparable(fastAnswer) == Self.comparable(routerAnswer), "request \(index)")
        }
        #expect(try await fast.log() == router.log())
        await fast.server.stop()
        await router.server.stop()
    }
}

extension Array {
    fileprivate func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
