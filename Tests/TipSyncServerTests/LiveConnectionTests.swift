import Foundation
import Testing
import TipSync
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncNetworking
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// A connection whose first request is `GET /v1/live` is served on its pipeline, without a task while
/// the stream is idle (issue 35: 22 KB per idle live connection on Hummingbird's connection task,
/// about 9 KB here; docs/benchmark-history.md). These tests hold that path to what protocol.md and the HTTP path
/// promise: the same answers, headers, refusals, timeouts and endings, over real sockets.
@Suite(.timeLimit(.minutes(5))) struct LiveConnectionTests {
    static let origin = "https://app.example.com"
    /// How long a read may wait: a bound on a hang, not a speed (the whole suite runs beside these
    /// tests on 2 cores, and stalls of half a minute were seen while it starts its processes).
    static let bound = 120.0

    static func withServer(
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (LiveServer, ServerFixture) async throws -> Void
    ) async throws {
        let fixture = try await ServerFixture.make()
        var configuration = ServerConfiguration()
        configuration.corsOrigins = [origin]
        configure(&configuration)
        let server = try await LiveServer.start(store: fixture.store, configuration: configuration)
        do {
            try await body(server, fixture)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// The account's cursor before anything was pushed.
    static func startCursor(_ server: LiveServer, _ fixture: ServerFixture) async throws -> String {
        let (status, data) = try await RawConnection.exchange(
            port: server.port, method: "GET", path: "/v1/pull",
            headers: ["Authorization": "Bearer \(fixture.tokens["laptop"]!)"])
        #expect(status == 200)
        return try JSONCoding.decode(PullResponse.self, from: data).cursor
    }

    static func push(_ server: LiveServer, _ fixture: ServerFixture, seq: Int64) async throws {
        let request = PushRequest(changes: [change("phone", seq, .parameter(id: "p", value: .int(seq)))])
        let (status, _) = try await RawConnection.exchange(
            port: server.port, method: "POST", path: "/v1/push",
            headers: ["Authorization": "Bearer \(fixture.tokens["phone"]!)", "Content-Type": "application/json"],
            body: Array(try JSONCoding.encoder.encode(request)))
        #expect(status == 200)
    }

    static func liveRequest(_ path: String, token: String) -> String {
        "GET \(path) HTTP/1.1\r\nHost: t\r\nOrigin: \(origin)\r\nAuthorization: Bearer \(token)\r\n\r\n"
    }

    @Test func theFirstBytesDecideWhereAConnectionGoes() {
        func route(_ text: String) -> FirstRequestSniffer.Route? { FirstRequestSniffer.route(of: Array(text.utf8)) }
        // Not yet known: every byte so far agrees with `GET /v1/live`, and what follows it decides.
        for text in ["", "G", "GET /v1/", "GET /v1/live"] { #expect(route(text) == nil, "\(text)") }
        #expect(route("GET /v1/live HTTP/1.1\r\n") == .live)
        #expect(route("GET /v1/live?cursor=g.0 HTTP/1.1\r\n") == .live)
        // Known at the first byte that differs.
        for text in ["P", "POST /v1/push", "GET /v1/p", "GET /health", "HEAD /v1/live ", "get /v1/live ", "\r\n"] {
            #expect(route(text) == .http, "\(text)")
        }
        #expect(route("GET /v1/lively HTTP/1.1") == .http)
        #expect(route("GET /v1/live/x HTTP/1.1") == .http)
    }

    @Test func theDateHeaderIsAnIMFFixdate() {
        // RFC 9110's own example, and a date with one-digit fields.
        #expect(HTTPDate.text(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.text(Date(timeIntervalSince1970: 1_798_761_599.9)) == "Thu, 31 Dec 2026 23:59:59 GMT")
        #expect(HTTPDate.text(Date(timeIntervalSince1970: 1_772_413_509)) == "Mon, 02 Mar 2026 01:05:09 GMT")
        // The text kept for the latest second is that second's.
        let now = Date(timeIntervalSince1970: 1_798_761_599.2)
        #expect(HTTPDate.cached(now) == "Thu, 31 Dec 2026 23:59:59 GMT")
        #expect(HTTPDate.cached(now.addingTimeInterval(0.5)) == "Thu, 31 Dec 2026 23:59:59 GMT")
        #expect(HTTPDate.cached(now.addingTimeInterval(1)) == "Fri, 01 Jan 2027 00:00:00 GMT")
        #expect(HTTPDate.cached(now) == "Thu, 31 Dec 2026 23:59:59 GMT")
    }

    @Test func aStreamOnAFreshConnectionCarriesChangesWithTheHeadersOfAnyAnswer() async throws {
        try await Self.withServer { server, fixture in
            let cursor = try await Self.startCursor(server, fixture)
            let connection = try await offPool { try RawConnection(port: server.port) }
            connection.send(Self.liveRequest("/v1/live?cursor=\(cursor)", token: fixture.tokens["laptop"]!))
            let opening = await connection.read(until: "event: ready", within: Self.bound)
            let headers = opening.components(separatedBy: "\r\n\r\n").first?.lowercased() ?? ""
            #expect(headers.hasPrefix("http/1.1 200 ok"), "\(headers)")
            #expect(headers.contains("content-type: text/event-stream"))
            #expect(headers.contains("cache-control: no-cache"))
            #expect(headers.contains("transfer-encoding: chunked"))
            // The connection closes when the stream ends: said at once, so no client pools it.
            #expect(headers.contains("connection: close"))
            #expect(headers.contains("server: tipsync-server"))
            #expect(headers.contains("access-control-allow-origin: \(Self.origin)"))
            let date = try #require(headers.components(separatedBy: "\r\n").first { $0.hasPrefix("date: ") })
            #expect(date.wholeMatch(of: /date: [a-z]{3}, \d\d [a-z]{3} \d{4} \d\d:\d\d:\d\d gmt/) != nil, "\(date)")
            #expect(opening.contains(#"data: {"cursor":"\#(cursor)","catalog":null}"#))
            #expect(server.metric("tipsync_live_connections") == 1)
            #expect(server.metric(#"tipsync_live_streams_opened_total{path="pipeline"}"#) == 1)

            try await Self.push(server, fixture, seq: 1)
            let news = await connection.read(until: #""more":false"#, within: Self.bound)
            #expect(news.contains("event: changes"))
            #expect(news.contains(#""seq":1"#))

            // The stream ends (as at a revocation or shutdown): the body's last chunk, then the close.
            server.notifier.finishAll()
            let (rest, closed) = await connection.readUntilClosed(within: Self.bound)
            #expect(closed)
            #expect(rest.hasSuffix("0\r\n\r\n"), "\(rest.suffix(40))")
            #expect(server.metric("tipsync_live_connections") == 0)
        }
    }

    @Test func aNotifyOnlyStreamSaysChangesAndHeartbeats() async throws {
        try await Self.withServer { server, fixture in
            let connection = try await offPool { try RawConnection(port: server.port) }
            connection.send(Self.liveRequest("/v1/live", token: fixture.tokens["laptop"]!))
            #expect(await connection.read(until: "event: ready\ndata: {}\n\n", within: Self.bound).contains("200 OK"))
            try await Self.push(server, fixture, seq: 1)
            #expect(
                await connection.read(until: "event: changes\ndata: {}\n\n", within: Self.bound).contains("changes"))
            server.notifier.heartbeat()
            #expect(await connection.read(until: ": heartbeat\n\n", within: Self.bound).contains("heartbeat"))
        }
    }

    @Test func whatTheClientSendsAfterItsStreamRequestIsDroppedAndTheStreamGoesOn() async throws {
        try await Self.withServer { server, fixture in
            let connection = try await offPool { try RawConnection(port: server.port) }
            connection.send(Self.liveRequest("/v1/live", token: fixture.tokens["laptop"]!))
            _ = await connection.read(until: "event: ready", within: Self.bound)
            // A pipelined request and bytes no parser could read: neither is answered nor refused.
            connection.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n\u{0}\u{1}not http at all\r\n\r\n")
            try await Self.push(server, fixture, seq: 1)
            let news = await connection.read(until: "event: changes\ndata: {}\n\n", within: Self.bound)
            #expect(news.contains("event: changes"))
            #expect(!news.contains("HTTP/1.1"), "\(news)")
            #expect(server.metric(#"tipsync_requests_refused_total{reason="malformed_request"}"#) == 0)
        }
    }

    @Test func aRefusedStreamIsAnsweredWholeThenTheConnectionCloses() async throws {
        try await Self.withServer { server, fixture in
            let stranger = try await offPool { try RawConnection(port: server.port) }
            stranger.send(Self.liveRequest("/v1/live", token: "not-a-token"))
            let (refused, closed) = await stranger.readUntilClosed(within: Self.bound)
            #expect(closed)
            #expect(refused.hasPrefix("HTTP/1.1 401 "), "\(refused.prefix(200))")
            #expect(refused.lowercased().contains("connection: close"))
            #expect(refused.lowercased().contains("access-control-allow-origin: \(Self.origin)"))
            #expect(refused.contains(#""code":"unauthorized""#))

            let badCursor = try await offPool { try RawConnection(port: server.port) }
            badCursor.send(Self.liveRequest("/v1/live?cursor=nonsense", token: fixture.tokens["laptop"]!))
            let (answer, ended) = await badCursor.readUntilClosed(within: Self.bound)
            #expect(ended)
            #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(answer.prefix(200))")
            #expect(answer.contains(#""code":"invalid_cursor""#))
            // Neither left a subscription behind.
            #expect(server.notifier.count == 0)
        }
    }

    @Test func aStreamAskedForAfterOtherRequestsOnItsConnectionWorksTheSame() async throws {
        try await Self.withServer { server, fixture in
            let connection = try await offPool { try RawConnection(port: server.port) }
            connection.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(await connection.read(until: #""status":"ok""#, within: Self.bound).hasPrefix("HTTP/1.1 200"))
            connection.send(Self.liveRequest("/v1/live", token: fixture.tokens["laptop"]!))
            #expect(await connection.read(until: "event: ready", within: Self.bound).contains("text/event-stream"))
            try await Self.push(server, fixture, seq: 1)
            #expect(await connection.read(until: "event: changes", within: Self.bound).contains("changes"))
            #expect(server.metric(#"tipsync_live_streams_opened_total{path="connection_task"}"#) == 1)
            #expect(server.metric(#"tipsync_live_streams_opened_total{path="pipeline"}"#) == 0)
        }
    }

    /// The Swift client asks its device check, account and pull over a pooled keep-alive connection,
    /// then opens its stream: the stream must not ride on that connection (issue 77, item 8: every
    /// reference client's stream was on a connection task, ~95 KB each on the server against ~16 KB).
    @Test func theSwiftClientsStreamIsServedOnItsPipeline() async throws {
        try await Self.withServer { server, fixture in
            let replica = try TipsReplica(
                directory: Scratch.path("stream-connection"), deviceID: "laptop", environment: [:])
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
            let client = SyncClient(
                replica: replica, configuration: SyncConfiguration(server: url, token: fixture.tokens["laptop"]!))
            var updates = await client.statusUpdates().makeAsyncIterator()
            let running = Task { try await client.run() }
            defer { running.cancel() }
            while let status = await updates.next(), status.state != .connected, status.state != .stopped {}
            #expect(await client.status.state == .connected)
            // `connected` is said once the pull reached the end, before the stream opens: a change
            // pushed now reaches the laptop only through its stream, which was open to carry it.
            try await Self.push(server, fixture, seq: 1)
            while replica.parameterValue("p") != .int(1), await updates.next() != nil {}
            #expect(replica.parameterValue("p") == .int(1))
            #expect(server.metric(#"tipsync_live_streams_opened_total{path="pipeline"}"#) == 1)
            #expect(server.metric(#"tipsync_live_streams_opened_total{path="connection_task"}"#) == 0)
        }
    }

    @Test func aClientThatLeavesEndsItsStream() async throws {
        try await Self.withServer { server, fixture in
            let connection = try await offPool { try RawConnection(port: server.port) }
            connection.send(Self.liveRequest("/v1/live", token: fixture.tokens["laptop"]!))
            _ = await connection.read(until: "event: ready", within: Self.bound)
            #expect(server.notifier.count == 1)
            connection.shutdownWrite()
            #expect(await connection.readUntilClosed(within: Self.bound).closed)
            while server.notifier.count > 0 { await Task.yield() }
            #expect(server.metric("tipsync_connection_peer_closed_total") == 1)
        }
    }

    @Test func aRequestLineThatStopsShortIsClosedAtTheHeadTimeout() async throws {
        let shortHead: (inout ServerConfiguration) -> Void = { $0.requestHeadTimeout = .milliseconds(300) }
        try await Self.withServer(configure: shortHead) { server, _ in
            let connection = try await offPool { try RawConnection(port: server.port) }
            connection.send("GET /v1/li")
            let (text, closed) = await connection.readUntilClosed(within: Self.bound)
            #expect(closed)
            #expect(text.isEmpty)
            #expect(server.metric(#"tipsync_connection_timeouts_total{phase="head"}"#) == 1)
        }
    }

    @Test func aGracefulShutdownEndsStreamsServedOnTheirPipeline() async throws {
        let fixture = try await ServerFixture.make()
        let server = try await LiveServer.start(store: fixture.store)
        let connection = try await offPool { try RawConnection(port: server.port) }
        connection.send(Self.liveRequest("/v1/live", token: fixture.tokens["laptop"]!))
        _ = await connection.read(until: "event: ready", within: Self.bound)
        async let stopped: Void = server.stop()
        let (rest, closed) = await connection.readUntilClosed(within: Self.bound)
        await stopped
        #expect(closed)
        #expect(rest.hasSuffix("0\r\n\r\n"), "\(rest.suffix(40))")
    }
}
