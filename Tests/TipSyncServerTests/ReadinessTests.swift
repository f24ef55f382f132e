import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncServer

/// Issue 77, item 4: `/health` answered seconds before a restarted server served a stream, and a load
/// balancer believes `/health`. `GET /ready` says `200` only once the listener accepts and other
/// instances' events reach this one; until then (and again whenever the listening connection drops)
/// `503` with `Retry-After: 1` and what it waits for. `/health` keeps saying the process answers.
@Suite struct ReadinessTests {
    static func answer(_ client: some TestClientProtocol, _ path: String) async throws -> (
        status: HTTPResponse.Status, retryAfter: String?, body: String
    ) {
        try await client.execute(uri: path, method: .get) { response in
            (response.status, response.headers[.retryAfter], String(buffer: response.body))
        }
    }

    @Test func readyOnlyOnceAcceptingAndListeningAndNotAfterTheListenerDrops() async throws {
        let fixture = try await ServerFixture.make()
        var dependencies = ServerDependencies(store: fixture.store)
        dependencies.readiness = Readiness()
        let readiness = dependencies.readiness
        let router = buildRouter(configuration: .test, dependencies: dependencies)
        try await Application(router: router).test(.router) { client in
            var answer = try await Self.answer(client, "/ready")
            #expect(answer.status == .serviceUnavailable)
            #expect(answer.retryAfter == "1")
            #expect(answer.body == #"{"status":"starting","waitingFor":["accepting","listening"]}"#)
            #expect(try await Self.answer(client, "/health").status == .ok)

            readiness.holds(.accepting)
            answer = try await Self.answer(client, "/ready")
            #expect(answer.status == .serviceUnavailable)
            #expect(answer.body == #"{"status":"starting","waitingFor":["listening"]}"#)

            readiness.holds(.listening)
            answer = try await Self.answer(client, "/ready")
            #expect(answer.status == .ok)
            #expect(answer.retryAfter == nil)
            #expect(answer.body == #"{"status":"ready"}"#)

            // The listening connection dropped: streams here would miss other instances' pushes.
            readiness.lost(.listening)
            answer = try await Self.answer(client, "/ready")
            #expect(answer.status == .serviceUnavailable)
            #expect(answer.body == #"{"status":"starting","waitingFor":["listening"]}"#)
        }
    }

    /// A real listener on SQLite (one instance: nothing to listen for) becomes ready by itself, and
    /// then serves a live stream.
    @Test func aStartedServerBecomesReadyAndServesAStream() async throws {
        try await LiveConnectionTests.withServer { server, fixture in
            try await eventually {
                try await RawConnection.exchange(port: server.port, method: "GET", path: "/ready").status == 200
            }
            let (status, body) = try await RawConnection.exchange(port: server.port, method: "GET", path: "/ready")
            #expect(status == 200)
            #expect(String(decoding: body, as: UTF8.self) == #"{"status":"ready"}"#)
            let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
            connection.send(LiveConnectionTests.liveRequest("/v1/live", token: fixture.tokens["laptop"]!))
            let opening = await connection.read(until: "event: ready", within: LiveConnectionTests.bound)
            #expect(opening.hasPrefix("HTTP/1.1 200"), "\(opening)")
            #expect(opening.contains("event: ready"))
        }
    }
}
