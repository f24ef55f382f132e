import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
import TipSync
import TipSyncServer
import TipSyncTestSupport

/// One device must never be able to stop the server for everyone (issue: hardening). Each test
/// here reproduces a defect found by attacking the server from outside.
@Suite(.timeLimit(.minutes(5))) struct HardeningTests {
    // MARK: Client-supplied integers

    /// `seq` 9223372036854775807 twice trapped on overflow in the batch check (SIGILL: the server died).
    @Test(arguments: [
        "9223372036854775807, 9223372036854775807", "9223372036854775807, 1",
        "-9223372036854775808, 9223372036854775807", "1, 9223372036854775807",
    ])
    func extremeSequenceNumbersAreRefusedNotATrap(_ seqs: String) async throws {
        let fixture = try await ServerFixture.make()
        let hlc = HLC(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000), counter: 0).description
        let changes = seqs.split(separator: ",").map {
            #"{"device":"phone","seq":\#($0.trimmingCharacters(in: .whitespaces)),"hlc":"\#(hlc)","kind":"datastoreReset"}"#
        }
        try await fixture.app().test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: ByteBuffer(string: #"{"changes":[\#(changes.joined(separator: ","))]}"#)
            ) { response in
                #expect(response.status == .unprocessableContent)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "invalid_change")
                #expect(error.message.hasPrefix("changes[0].seq") || error.message.hasPrefix("changes[1].seq"))
            }
            // Consecutive at the top of the range: well-formed, so the answer is the gap to the device's log.
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(
                    PushRequest(changes: [
                        change("phone", JSONNumberLimits.maxInteger - 1, .datastoreReset),
                        change("phone", JSONNumberLimits.maxInteger, .datastoreReset),
                    ]))
            ) { response in
                #expect(response.status == .conflict)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "sequence_gap" && error.expectedSeq == 1)
            }
            // Still serving, nothing stored.
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
        }
        #expect(try await fixture.store.logCount(account: fixture.accountID) == 0)
    }

    /// `seq` 0 or negative was answered `200 {"duplicates": 1}`.
    @Test(arguments: [0, -1, Int64.min])
    func sequenceNumbersBelowOneAreInvalid(_ seq: Int64) async throws {
        let fixture = try await ServerFixture.make()
        try await fixture.app().test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: [change("phone", seq, .datastoreReset)]))
            ) { response in
                #expect(response.status == .unprocessableContent)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "invalid_change")
                #expect(error.message.hasPrefix("changes[0].seq"))
            }
        }
        #expect(try await fixture.store.logCount(account: fixture.accountID) == 0)
    }

    @Test func extremeQueryIntegersAreRefusedNotATrap() async throws {
        let fixture = try await ServerFixture.make()
        try await fixture.app().test(.router) { client in
            for query in [
                "limit=9223372036854775807", "limit=-9223372036854775808", "limit=99999999999999999999",
                "wait=9223372036854775807", "wait=-1", "cursor=9223372036854775807", "cursor=-1",
                "cursor=x.9223372036854775808",
            ] {
                try await client.execute(uri: "/v1/pull?\(query)", method: .get, headers: fixture.headers("phone")) {
                    #expect($0.status == .badRequest, "\(query)")
                }
            }
        }
    }

    // MARK: Names

    /// Names compare as Unicode scalars, never normalized: `café` written NFC and NFD are two
    /// different device names, on token creation and on the push check alike.
    @Test func deviceNamesCompareAsUnicodeScalars() async throws {
        let nfc = "caf\u{E9}"
        let nfd = "cafe\u{301}"
        #expect(nfc == nfd)  // Swift's String == would call them equal; the protocol does not
        // Two devices, one token each (a Swift dictionary keyed by name would merge them: String == is
        // canonical equivalence).
        let fixture = try await ServerFixture.make(devices: [])
        let tokens = [
            try await CredentialIssuance(fixture.store).createToken(accountName: "alice", device: nfc),
            try await CredentialIssuance(fixture.store).createToken(accountName: "alice", device: nfd),
        ]
        @Sendable func headers(_ name: String) -> HTTPFields {
            var headers = fixture.headers("none")
            headers[.authorization] = "Bearer " + tokens[name.unicodeScalars.count == 4 ? 0 : 1]
            return headers
        }
        try await fixture.app().test(.router) { client in
            // The NFC token cannot push changes naming the NFD device, and the other way round.
            for (token, named) in [(nfc, nfd), (nfd, nfc)] {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: headers(token),
                    body: try body(PushRequest(changes: [change(named, 1, .datastoreReset)]))
                ) { response in
                    #expect(response.status == .forbidden)
                    let code = try decode(ErrorBody.self, response.body).error.code
                    #expect(code == "device_mismatch")
                }
            }
            // Each form pushes under its own name.
            for name in [nfc, nfd] {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: headers(name),
                    body: try body(PushRequest(changes: [change(name, 1, .parameter(id: "p", value: .int(1)))]))
                ) { #expect($0.status == .ok) }
            }
        }
        let nfcSeq = try await fixture.store.highestSeq(account: fixture.accountID, device: nfc)
        let nfdSeq = try await fixture.store.highestSeq(account: fixture.accountID, device: nfd)
        #expect(nfcSeq == 1 && nfdSeq == 1)
        #expect(try await fixture.store.logCount(account: fixture.accountID) == 2)
    }

    // MARK: Logs

    /// A token sent in the query string (`?access_token=`) ended up in the debug log.
    @Test func noSecretReachesTheLogAtAnyLevel() async throws {
        let fixture = try await ServerFixture.make()
        let lines = LogCapture()
        var logger = Logger(label: "redaction-test") { _ in lines }
        logger.logLevel = .trace
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, logger: logger))
        let token = try #require(fixture.tokens["phone"])
        try await app.test(.router) { client in
            try await client.execute(
                uri: "/v1/pull?limit=10&access_token=\(token)&key=tsa_adminsecret", method: .get,
                headers: fixture.headers("phone")
            ) { #expect($0.status == .ok) }
            try await client.execute(uri: "/health?token=\(token)", method: .get) { #expect($0.status == .ok) }
            var bad = fixture.headers("phone")
            bad[.authorization] = "Bearer ts_wrongsecretvalue"
            try await client.execute(uri: "/v1/pull?jwt=eyJsecretjwt", method: .get, headers: bad) {
                #expect($0.status == .unauthorized)
            }
        }
        let text = lines.text
        #expect(text.contains("/v1/pull"))  // requests are logged…
        #expect(text.contains("access_token=<redacted>"))
        for secret in [token, "tsa_adminsecret", "ts_wrongsecretvalue", "eyJsecretjwt"] {
            #expect(!text.contains(secret), "\(secret) appears in the log")  // …secrets never
        }
    }

    // MARK: HTTP details

    @Test func headIsAnsweredLikeGetWithoutABody() async throws {
        let fixture = try await ServerFixture.make()
        try await fixture.app().test(.router) { client in
            try await client.execute(uri: "/health", method: .head) { response in
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == 0)
            }
            try await client.execute(uri: "/v1/pull", method: .head, headers: fixture.headers("phone")) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(response.body.readableBytes == 0)
            }
            try await client.execute(uri: "/v1/pull", method: .head) { #expect($0.status == .unauthorized) }
        }
    }

    @Test func aKnownRouteAskedWithAnotherMethodIs405WithAllow() async throws {
        let fixture = try await ServerFixture.make()
        try await fixture.app().test(.router) { client in
            for (method, uri, allow) in [
                (HTTPRequest.Method.put, "/v1/push", "POST"), (.get, "/v1/push", "POST"),
                (.delete, "/health", "GET, HEAD"), (.post, "/v1/pull", "GET, HEAD"),
                (.patch, "/v1/devices/phone", "GET, HEAD"),
            ] {
                try await client.execute(uri: uri, method: method, headers: fixture.headers("phone")) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                    #expect(response.headers[.allow] == allow)
                    let code = try decode(ErrorBody.self, response.body).error.code
                    #expect(code == "method_not_allowed")
                }
            }
            try await client.execute(uri: "/v2/push", method: .put) { response in
                #expect(response.status == .notFound)
                let code = try decode(ErrorBody.self, response.body).error.code
                #expect(code == "not_found")
            }
            // No route matched, so no route's authentication ran: 405 without a token too.
            try await client.execute(uri: "/v1/push", method: .put) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "POST")
            }
            // A route's own 404 on a known path, asked with a method it answers, stays a 404.
            try await client.execute(uri: "/v1/catalog", method: .get, headers: fixture.headers("phone")) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func pushBodiesMustBeDeclaredJSON() async throws {
        let fixture = try await ServerFixture.make()
        let payload = try body(PushRequest(changes: [change("phone", 1, .datastoreReset)]))
        try await fixture.app().test(.router) { client in
            for contentType in [nil, "text/plain", "application/x-www-form-urlencoded"] {
                var headers = fixture.headers("phone")
                headers[.contentType] = contentType
                try await client.execute(uri: "/v1/push", method: .post, headers: headers, body: payload) { response in
                    #expect(response.status == .unsupportedMediaType)
                    let code = try decode(ErrorBody.self, response.body).error.code
                    #expect(code == "unsupported_media_type")
                }
            }
            var headers = fixture.headers("phone")
            headers[.contentType] = "Application/JSON; charset=utf-8"
            try await client.execute(uri: "/v1/push", method: .post, headers: headers, body: payload) {
                #expect($0.status == .ok)
            }
        }
    }

    // MARK: Connections (real sockets)

    /// A real `tipsync-server` process with an account `conn` and a token for `phone`: connection
    /// tests run against their own process, so their sockets are out of reach of everything else
    /// the test process runs at the same time.
    static func processServer(_ arguments: [String]) async throws -> (
        server: CrashConsistencyTests.ServerUnderTest, token: String
    ) {
        let directory = Scratch.path("tipsync-conn")
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        _ = try await ServerProcessTests.run(["accounts", "create", "conn", "--database", database])
        let token = try await ServerProcessTests.run([
            "tokens", "create", "--account", "conn", "--device", "phone", "--database", database,
        ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return (try await CrashConsistencyTests.ServerUnderTest.start(database: database, arguments: arguments), token)
    }

    /// Connections that send nothing, only a CRLF, HTTP/0.9 junk or half a head were held forever.
    @Test(arguments: ["", "\r\n", "GET /\r\n", "GET /health HTTP/1.1\r\nHost: x\r\n"])
    func aConnectionWithoutACompleteHeadIsClosed(_ sent: String) async throws {
        // Long enough that the complete head of the `/health` check below arrives in time on a loaded
        // machine (0.3 s did not, once, with the whole suite and a benchmark running; 1 s did not, with
        // the suite's browser and Node tests beside it on 2 cores; 5 s did not, twice, in full runs:
        // the `/health` connection closed unanswered while the server ran).
        let (server, _) = try await Self.processServer(["--request-head-timeout", "15"])
        let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
        connection.send(sent)
        let (_, closed) = await connection.readUntilClosed(within: 60)
        #expect(closed)
        do {
            #expect(try await RawConnection.exchange(port: server.port, method: "GET", path: "/health").status == 200)
        } catch {
            // Once, on a clean clone's CI, all four cases had their `/health` connection reset at the
            // same moment: say whether the server was still running and what it wrote.
            Issue.record(
                "\(error); server running: \(server.process.isRunning); its log:\n\(server.process.stderr.text)")
        }
        await server.kill()
    }

    /// A keep-alive connection that goes silent after an answer is closed at the head timeout too
    /// (the timer armed for the first request is not moved per request, and must still catch it).
    @Test func aConnectionSilentAfterAnAnswerIsClosedAtTheHeadTimeout() async throws {
        // 3 s was too short once on a clean clone's CI with a build running beside it: the three
        // pipelined requests sent at once were not answered before the head timeout closed the
        // connection (0 answers). The timeout has to outlast a starved server's first answers.
        let (server, _) = try await Self.processServer([
            "--request-head-timeout", "10", "--request-body-timeout", "600",
        ])
        let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
        for _ in 0..<3 { connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n") }
        let (text, closed) = await connection.readUntilClosed(within: 60)
        #expect(closed)
        #expect(text.components(separatedBy: "HTTP/1.1 200").count == 4)
        await server.kill()
    }

    /// `Content-Length: 10000000000` and no body: refused at once with a JSON 413, connection closed.
    @Test func aDeclaredBodyAboveTheLimitIsRefusedAtOnce() async throws {
        // The refusal, not a timeout, must close it.
        let (server, token) = try await Self.processServer(["--request-body-timeout", "600"])
        let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
        connection.send(
            "POST /v1/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n")
        let (text, closed) = await connection.readUntilClosed(within: 20)
        #expect(closed)
        #expect(text.hasPrefix("HTTP/1.1 413"))
        #expect(text.contains(#""code":"body_too_large""#))
        await server.kill()
    }

    @Test func aBodyThatNeverEndsIsClosed() async throws {
        let (server, token) = try await Self.processServer(["--request-body-timeout", "0.3"])
        for head in [
            "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"cha\r\n", "Content-Length: 100\r\n\r\n{\"changes\":",
        ] {
            let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
            connection.send(
                "POST /v1/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\n" + head)
            let (_, closed) = await connection.readUntilClosed(within: 20)
            #expect(closed)
        }
        // Nothing stored: the device's highest stored seq is still 0.
        let device = try await RawConnection.exchange(
            port: server.port, method: "GET", path: "/v1/devices/phone", headers: ["Authorization": "Bearer \(token)"])
        #expect(String(decoding: device.body, as: UTF8.self).contains(#""highestSeq":0"#))
        await server.kill()
    }

    @Test func bytesTheParserCannotReadGetAJSONError() async throws {
        let fixture = try await ServerFixture.make()
        let server = try await LiveServer.start(store: fixture.store)
        let junk = try await RawConnection.request(port: server.port, "GET / HTTP/1.1\r\nHost x\r\n\r\n")
        #expect(junk.hasPrefix("HTTP/1.1 400"))
        #expect(junk.contains(#""code":"malformed_request""#))
        let method = try await RawConnection.request(port: server.port, "BREW /v1/push HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(method.hasPrefix("HTTP/1.1 405"))
        #expect(method.contains(#""code":"method_not_allowed""#))
        await server.stop()
    }

    /// 200 slow-loris connections trickling a byte a second must not stop anyone else. A real
    /// `tipsync-server` process, so its 200 accepted sockets are its own, not the test process's.
    @Test func othersAreServedWhileSlowLorisConnectionsTrickle() async throws {
        let directory = Scratch.path("tipsync-loris")
        let server = try await CrashConsistencyTests.ServerUnderTest.start(
            database: "sqlite:" + directory.appendingPathComponent("server.sqlite").path,
            arguments: ["--request-head-timeout", "120"])  // so the lorises stay, however slow this machine
        let head = Array("GET /health HTTP/1.1\r\nHost: slow\r\nX-Padding: aaaaaaaaaaaaaaaaaaaa\r\n".utf8)
        let port = server.port
        let lorises = try await offPool { try (0..<200).map { _ in try RawConnection(port: port) } }
        var served = 0
        for second in 0..<4 {
            for loris in lorises { loris.send(bytes: [head[second]]) }
            for _ in 0..<5 {
                let answer = try await RawConnection.exchange(port: server.port, method: "GET", path: "/health")
                if answer.status == 200 { served += 1 }
            }
            try await Task.sleep(for: .seconds(1))  // the attack's pace, not a wait for a result
        }
        #expect(served == 20)
        // The trickling connections are still open (under the head timeout): they were tolerated, not the cause.
        #expect(lorises.allSatisfy { $0.send(bytes: [head[4]]) })
        await server.kill()
    }

    /// A long-polling client that closed its side was released only ~19 s later; live streams too.
    /// A real `tipsync-server` process: its sockets are its own, out of reach of anything else the
    /// test process does with descriptors; the counts are read from its `/metrics`.
    @Test func clientsThatLeaveAreReleasedAtOnceAndCountedCorrectly() async throws {
        let directory = Scratch.path("tipsync-leave")
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        #expect(try await ServerProcessTests.run(["accounts", "create", "leave", "--database", database]).status == 0)
        let token = try await ServerProcessTests.run([
            "tokens", "create", "--account", "leave", "--device", "laptop", "--database", database,
        ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // Twenty streams of one device: more than a device holds by default. The head timeout and the
        // long-polls' wait well beyond the test's waits: under the whole suite on two cores the 20
        // long-polls (`wait=60`) were all answered, their minute over, before the counts were read
        // (a clean-clone CI run: "the server counted (longPolls: 0.0, live: 20.0)").
        let server = try await CrashConsistencyTests.ServerUnderTest.start(
            database: database,
            arguments: [
                "--max-live-streams-per-device", "20", "--request-head-timeout", "600", "--max-wait", "600",
            ])
        let port = server.port
        @Sendable func counts() async throws -> (longPolls: Double?, live: Double?) {
            let text = String(
                decoding: try await RawConnection.exchange(port: port, method: "GET", path: "/metrics").body,
                as: UTF8.self)
            func value(_ name: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                    Double($0.dropFirst(name.count + 1))
                }
            }
            return (value("tipsync_long_polls"), value("tipsync_live_connections"))
        }
        var clients: [RawConnection] = []
        for index in 0..<40 {
            let connection = try await offPool { try RawConnection(port: port) }
            let target = index.isMultiple(of: 2) ? "/v1/pull?wait=600" : "/v1/live"
            connection.send("GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            clients.append(connection)
        }
        var seen: (longPolls: Double?, live: Double?) = (nil, nil)
        try await eventually {
            seen = try await counts()
            return seen == (20, 20)
        }
        // Said when it fails (it did, in full local runs under load, with no clue which count lagged),
        // with what the first long-poll received, if anything.
        if seen.longPolls != 20 || seen.live != 20 {
            let answered = await clients[0].read(until: "\r\n\r\n", within: 1)
            Issue.record("the server counted \(seen); the first long-poll received: '\(answered.prefix(400))'")
        }
        for client in clients { client.shutdownWrite() }
        try await eventually { try await counts() == (0, 0) }
        for client in clients {
            let (text, closed) = await client.readUntilClosed(within: 20)
            #expect(closed, "still open after: \(text.suffix(200))")
        }
        await server.kill()
    }
}

/// ``waitUntil(_:sourceLocation:)`` for a condition that must ask over the network, usually a
/// server process of its own: fails after 60 s (20 s was not always enough for 40 connections to a
/// debug server beside the whole suite on two cores; a bound against hanging, not a timing claim).
func eventually(_ condition: () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation)
    async throws
{
    let deadline = ContinuousClock.now + .seconds(60)
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not reached within 60 s", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Waits for a condition by yielding (never sleeping for a guessed time); fails after 20 s.
func waitUntil(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not reached within 20 s", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Collects every log line, message and metadata alike.
final class LogCapture: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.withLock { $0.append("\(event.level) \(event.message) \(all)") }
    }

    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

extension HardeningTests {
    /// An HTTP/1.0 request without `Connection: keep-alive` asks for its connection to close after the
    /// answer (HTTP/1.0's default); the server kept it open until the head timeout (issue 59, item 6).
    /// The head timeout here is a minute, so a close within the read's bound is the answer's.
    @Test(arguments: ["GET /health", "GET /nope", "POST /v1/push"])
    func anHTTP10ConnectionClosesAfterItsAnswer(_ request: String) async throws {
        let fixture = try await ServerFixture.make()
        var configuration = ServerConfiguration()
        configuration.requestHeadTimeout = .seconds(60)
        let server = try await LiveServer.start(store: fixture.store, configuration: configuration)
        let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
        connection.send("\(request) HTTP/1.0\r\nAuthorization: Bearer \(fixture.tokens["phone"]!)\r\n\r\n")
        let (text, closed) = await connection.readUntilClosed(within: 30)
        #expect(closed, "still open after: \(text)")
        #expect(text.hasPrefix("HTTP/1.1 "))
        // Asked for, keep-alive still holds on HTTP/1.0.
        let kept = try await offPool { [port = server.port] in try RawConnection(port: port) }
        kept.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(await kept.readResponses(1, within: 30).map(\.status) == [200])
        kept.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(await kept.readResponses(1, within: 30).map(\.status) == [200])
        await server.stop()
    }
}
