import Foundation
import GRDB
import NIOCore
import Testing
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Pushes on one kept-alive connection, as a device sends them: answered in the order they came
/// (pipelined too), none overtaking one that waits for its commit, a token revoked after the server
/// cached it refused, a chunked body past the limit refused, and the device's budgets charged once
/// per request whatever the store answers. Each test drives a real server over plain sockets.
///
/// Every push is served one way: through the router's middlewares and `SyncController.push` in a
/// connection task (the event-loop fast path that answered some of them by hand was removed, issue 55).
@Suite(.timeLimit(.minutes(5))) struct PushOnKeptAliveConnectionTests {
    /// The server's clock, fixed: answers carry it (`serverTime`), so both servers' answers compare.
    static let now: Int64 = 1_790_000_000_000

    struct Server {
        let server: LiveServer
        let fixture: ServerFixture

        static func start(configuration: ServerConfiguration = ServerConfiguration()) async throws -> Server {
            let fixture = try await ServerFixture.make()
            let server = try await LiveServer.start(
                store: fixture.store, configuration: configuration, now: { PushOnKeptAliveConnectionTests.now })
            return Server(server: server, fixture: fixture)
        }

        func connection() async throws -> RawConnection {
            try await offPool { [port = server.port] in try RawConnection(port: port) }
        }

        /// Every change the account holds, as pulled from the start by another device.
        func log() async throws -> String {
            let pulled = try await RawConnection.exchange(
                port: server.port, method: "GET", path: "/v1/pull",
                headers: ["Authorization": "Bearer \(fixture.tokens["laptop"]!)"])
            return PushOnKeptAliveConnectionTests.normalized(String(decoding: pulled.body, as: UTF8.self))
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

    /// Requests sent back to back before any answer (HTTP/1.1 pipelining) are answered in order.
    @Test func pipelinedRequestsAreAnsweredInTheOrderTheyCame() async throws {
        let server = try await Server.start()
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
        #expect(server.server.metric("tipsync_pushes_total") == 4)
        await server.server.stop()
    }

    /// While a push waits for its commit (the writer held here), requests behind it on its
    /// connection are not answered — not even one the router could answer at once.
    @Test func nothingOvertakesAPushWaitingForItsCommit() async throws {
        let server = try await Server.start()
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

    /// A token revoked after the cache learned it: the push fails in the store (which confirms the
    /// token) and is refused `401`; nothing is stored.
    @Test func aTokenRevokedAfterItWasCachedIsRefused() async throws {
        let server = try await Server.start()
        let (connection, token) = try await Self.connectionWithCachedToken(server)
        _ = try await server.fixture.store.revokeTokens(accountName: "alice", device: "phone", at: Self.now)
        connection.send(Self.push(Self.changes(Self.change(2)), token: token))
        let refused = await connection.readResponses(1, within: 30)
        #expect(refused.map(\.status) == [401])
        #expect(refused.first?.body.contains(#""code":"unauthorized""#) == true)
        #expect(try await server.fixture.store.highestSeq(account: server.fixture.accountID, device: "phone") == 1)
        await server.server.stop()
    }

    /// A chunked body past the limit (no `Content-Length` to refuse it by) is refused `413` part way.
    @Test func aBodyPastTheLimitIsRefusedAsTooLarge() async throws {
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = 2048
        let server = try await Server.start(configuration: configuration)
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

    /// A push the store refused (`409 sequence_gap`) spends the device's budgets once: the next push
    /// is answered `200`. (With the event-loop fast path, which charged it and handed it to the router
    /// that charged it again, the next push got `429` — issue 59, item 4.)
    @Test func aRefusedPushIsChargedOnce() async throws {
        var configuration = ServerConfiguration()
        configuration.requestRate = RateLimit(perSecond: 0.001, burst: 3)
        configuration.rateRefusalDelay = .zero  // the refusals here are answered at once
        configuration.changeRate = RateLimit(perSecond: 0.001, burst: 3)
        let server = try await Server.start(configuration: configuration)
        let token = server.fixture.tokens["phone"]!
        let answers = try await Self.exchange(
            [
                Self.push(Self.changes(Self.change(1)), token: token),
                Self.push(Self.changes(Self.change(5)), token: token),  // a gap: 409, stores nothing
                Self.push(Self.changes(Self.change(2)), token: token),  // the third request, the third change
            ], on: server)
        #expect(answers.map(\.status) == [200, 409, 200])
        await server.server.stop()
    }

    /// The request budget counts requests and the change budget changes; a push over either is
    /// refused `429` with `Retry-After` and stores nothing; the log holds exactly what was answered `200`.
    @Test func rateLimitsRefusePushesOverEitherBudget() async throws {
        var configuration = ServerConfiguration()
        configuration.requestRate = RateLimit(perSecond: 0.001, burst: 4)
        configuration.rateRefusalDelay = .zero  // the refusals here are answered at once
        configuration.changeRate = RateLimit(perSecond: 0.001, burst: 5)
        let server = try await Server.start(configuration: configuration)
        let token = server.fixture.tokens["phone"]!
        let answers = try await Self.exchange(
            [
                Self.push(Self.changes(Self.change(1)), token: token),
                Self.push(Self.changes(Self.change(2), Self.change(3)), token: token),
                Self.push(Self.changes(Self.change(4), Self.change(5), Self.change(6)), token: token),  // 6 > 5
                Self.push(Self.changes(Self.change(4)), token: token),
                Self.push(Self.changes(Self.change(5)), token: token),
                Self.push(Self.changes(Self.change(6)), token: token),  // the fifth request
            ], on: server)
        #expect(answers.map(\.status) == [200, 200, 429, 200, 429, 429])
        for refused in answers where refused.status == 429 {
            #expect(refused.headers.contains { $0.hasPrefix("retry-after:") })
            #expect(refused.body.contains(#""code":"rate_limited""#))
        }
        let log = try await server.log()
        #expect((1...4).allSatisfy { log.contains(#""id":"phone:\#($0)""#) })
        #expect(!log.contains(#""id":"phone:5""#))
        await server.server.stop()
    }
}

extension Array {
    fileprivate func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
