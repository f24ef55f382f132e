import Foundation
import Hummingbird
import HummingbirdTesting
import Prometheus
import Testing
import TipSync
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Request metrics (count, duration, errors, requests in progress) are counted in the application's
/// own registry, like every TipSync metric, by route, method and status.
@Suite struct RequestMetricsTests {
    @Test func requestsAreCountedByRouteMethodAndStatus() async throws {
        let fixture = try await ServerFixture.make()
        let app = buildApplication(
            configuration: .test,
            dependencies: ServerDependencies(store: fixture.store, registry: PrometheusCollectorRegistry()))
        try await app.test(.live) { client in
            for _ in 0..<3 {
                try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            }
            try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/v1/pull", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: "/metrics", method: .get) { response in
                let text = String(buffer: response.body)
                let route = #"http_request_method="GET",http_response_status_code="200"}"#
                #expect(Self.value(#"hb_requests{http_route="/health","# + route, in: text) == 3)
                #expect(Self.value(#"hb_requests{http_route="/v1/pull","# + route, in: text) == 1)
                #expect(
                    Self.value(
                        #"hb_request_errors{http_route="/v1/pull",http_request_method="GET",error_type="401"}"#,
                        in: text)
                        == 1)
                #expect(Self.value(#"http_server_request_duration_count{http_route="/health","# + route, in: text) == 3)
                // Only /metrics itself is in progress while it answers.
                #expect(Self.value(#"http_server_active_requests{http_request_method="GET"}"#, in: text) == 1)
            }
        }
    }

    /// A streamed body (unknown length, as a live stream's) is counted once it has been written, and
    /// its request is in progress until then.
    @Test func aStreamedBodyIsCountedWhenWritten() async throws {
        let registry = PrometheusCollectorRegistry()
        let middleware = RequestMetricsMiddleware<BasicRequestContext>(
            factory: DocumentedMetricsFactory(registry: registry))
        let (parts, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        let (writing, began) = AsyncStream.makeStream(of: Void.self)
        let router = Router()
        router.add(middleware: middleware)
        router.get("stream") { _, _ in
            Response(
                status: .ok,
                body: ResponseBody { writer in
                    began.yield()
                    for await part in parts { try await writer.write(part) }
                    try await writer.finish(nil)
                })
        }
        @Sendable func value(_ sample: String) -> Double? {
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return Self.value(sample, in: String(decoding: buffer, as: UTF8.self))
        }
        let counted = #"hb_requests{http_route="/stream",http_request_method="GET",http_response_status_code="200"}"#
        let active = #"http_server_active_requests{http_request_method="GET"}"#
        try await Application(router: router).test(.router) { client in
            async let response = client.execute(uri: "/stream", method: .get) { String(buffer: $0.body) }
            // The handler has returned and its body is being written: in progress, not yet counted.
            for await _ in writing { break }
            #expect(value(active) == 1)
            #expect(value(counted) ?? 0 == 0)
            continuation.yield(ByteBuffer(string: "data: a\n\n"))
            continuation.finish()
            let text = try await response
            #expect(text == "data: a\n\n")
        }
        #expect(value(counted) == 1)
        #expect(value(active) == 0)
    }

    /// The value of the Prometheus sample whose name and labels are `sample`, in `text`.
    static func value(_ sample: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(sample + " ") }
            .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
    }
}
