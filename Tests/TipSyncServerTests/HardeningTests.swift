import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport
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
