import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TipSync
import TipSyncServerTestSupport

/// What the library's NIO transport says when an answer breaks off: plain words an app may show, not
/// a library's type name (protocol.md §17.4: the status says why).
@Suite struct HTTPClientTransportTests {
    struct BrokenOff: Error {}

    /// A live stream whose server stops mid-answer, as one that crashed (its connection closes
    /// without the body's last chunk). Before, the status said "the live stream failed: The operation
    /// could not be completed. (NIOHTTP1.HTTPParserError error 2.)" — seen on 6,000 clients of a
    /// storm.
    @Test func aStreamThatBreaksOffSaysSoInPlainWords() async throws {
        let router = Router()
        router.get("/v1/live") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/event-stream"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "event: ready\ndata: {}\n\n"))
                    throw BrokenOff()
                })
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { server in
            let url = URL(string: "http://127.0.0.1:\(try #require(server.port))")!
            let transport = HTTPClientTransport(baseURL: url)
            let stream = try #require(
                try await transport.stream(SyncHTTPRequest(method: "GET", path: "/v1/live", timeout: 30)))
            #expect(stream.status == 200)
            var received = Data()
            do {
                for try await piece in stream.body { received += piece }
                Issue.record("the stream ended as if the server had ended it")
            } catch let error as SyncClientError {
                let message = "\(error)"
                #expect(message.contains("closed the connection before the answer ended"), "\(message)")
                #expect(!message.contains("NIO") && !message.contains("Error"), "\(message)")
                #expect(message.contains(url.absoluteString), "names the server: \(message)")
            }
            #expect(String(decoding: received, as: UTF8.self).hasPrefix("event: ready"))
        }
    }
}
