import Foundation
import Logging
import Testing
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 75, item 5: what the connection layer refuses below the router (a declared body over the
/// limit: `413`; `CONNECT`: `405`) carried no CORS and no `nosniff`, so a browser page whose push was
/// refused that way saw a CORS failure instead of the `413`. It now carries what the router's answers
/// carry.
@Suite struct ConnectionRefusalHeadersTests {
    @Test func aBodyDeclaredTooLargeReachesAnAllowedPageAsA413WithCORS() async throws {
        try await LiveConnectionTests.withServer { server, fixture in
            let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
            connection.send(
                "POST /v1/push HTTP/1.1\r\nHost: t\r\nOrigin: \(LiveConnectionTests.origin)\r\n"
                    + "Authorization: Bearer \(fixture.tokens["phone"]!)\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 99999999\r\n\r\n")
            let response = try #require(await connection.readResponses(1, within: LiveConnectionTests.bound).first)
            #expect(response.status == 413)
            #expect(response.headers.contains("access-control-allow-origin: \(LiveConnectionTests.origin)"))
            #expect(response.headers.contains("access-control-expose-headers: Retry-After, ETag"))
            #expect(response.headers.contains("x-content-type-options: nosniff"))
            // Another origin gets no CORS header (as from the router), still nosniff.
            let other = try await offPool { [port = server.port] in try RawConnection(port: port) }
            other.send(
                "POST /v1/push HTTP/1.1\r\nHost: t\r\nOrigin: https://evil.example\r\nContent-Length: 99999999\r\n\r\n")
            let refused = try #require(await other.readResponses(1, within: LiveConnectionTests.bound).first)
            #expect(refused.status == 413)
            #expect(!refused.headers.contains { $0.hasPrefix("access-control-allow-origin") })
            #expect(refused.headers.contains("x-content-type-options: nosniff"))
        }
    }

    /// A request the connection layer refuses (a declared body over the limit; a `CONNECT`) is in the
    /// access log as the router's requests are, marked `refused_by: connection`, and counted in
    /// `tipsync_requests_refused_total`.
    @Test func aRefusalBelowTheRouterIsLoggedAndCounted() async throws {
        let fixture = try await ServerFixture.make()
        var configuration = ServerConfiguration()
        configuration.accessLog = true
        let capture = LogCapture()
        let server = try await LiveServer.start(
            store: fixture.store, configuration: configuration, logger: Logger(label: "refusals") { _ in capture })
        let large = try await offPool { [port = server.port] in try RawConnection(port: port) }
        large.send("POST /v1/push?key=secret HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999\r\n\r\n")
        #expect(await large.readResponses(1, within: LiveConnectionTests.bound).map(\.status) == [413])
        let connect = try await offPool { [port = server.port] in try RawConnection(port: port) }
        connect.send("CONNECT t:443 HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await connect.readResponses(1, within: LiveConnectionTests.bound).map(\.status) == [405])
        let tooLarge = server.metric(#"tipsync_requests_refused_total{reason="body_too_large"}"#)
        await server.stop()
        let refusals = capture.text.split(separator: "\n").filter { $0.contains("refused_by") }
        #expect(refusals.count == 2, "\(capture.text)")
        let logged = try #require(refusals.first { $0.contains("413") })
        #expect(logged.hasPrefix("info request"))
        #expect(logged.contains("/v1/push?key=<redacted>"), "the access log's redaction applies: \(logged)")
        #expect(logged.contains("POST"))
        #expect(refusals.contains { $0.contains("405") && $0.contains("CONNECT") })
        #expect(tooLarge == 1)
    }
}
