import HTTPTypes
import Hummingbird
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Synchronization
import Testing

@testable import TipSyncNetworking

/// ``LiveConnection`` on an `EmbeddedChannel`: the answer's head and opening, each wake-up's news
/// written on the connection's event loop, and the response ended and the connection closed when
/// the stream ends — with a stream that carries text, not the server's live stream.
@Suite struct LiveConnectionTests {
    /// A stream whose news is the text handed to ``wake(_:)`` since it was last taken.
    final class TextStream: PipelinedStream {
        typealias News = String

        struct State {
            var news = ""
            var wake: (@Sendable () -> Void)?
            var termination: (@Sendable () -> Void)?
            var finished = false
            var closed = false
            var onPipeline: Bool?
        }
        let state = Mutex(State())

        func opened(onPipeline: Bool) { state.withLock { $0.onPipeline = onPipeline } }
        func closed() { state.withLock { $0.closed = true } }
        func finish() {
            let termination = state.withLock { state -> (@Sendable () -> Void)? in
                guard !state.finished else { return nil }
                state.finished = true
                return state.termination
            }
            termination?()
        }
        var wasEvicted: Bool { false }
        func onTermination(_ action: @escaping @Sendable () -> Void) {
            let now = state.withLock { state -> Bool in
                state.termination = action
                return state.finished
            }
            if now { action() }
        }
        func onWake(_ wake: @escaping @Sendable () -> Void) { state.withLock { $0.wake = wake } }
        func takeNews() -> String {
            state.withLock { state in
                defer { state.news = "" }
                return state.news
            }
        }
        func immediate(_ news: String) -> ByteBuffer? { ByteBuffer(string: news) }
        func write(_ news: String, to writer: inout any ResponseBodyWriter) async throws {
            try await writer.write(ByteBuffer(string: news))
        }

        /// News arrives: the connection is woken.
        func wake(_ text: String) {
            let wake = state.withLock { state in
                state.news += text
                return state.wake
            }
            wake?()
        }
    }

    /// What the channel wrote since last asked: the response parts, bodies as text.
    static func written(_ channel: EmbeddedChannel) throws -> [String] {
        var parts: [String] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) {
            switch part {
            case .head(let head):
                parts.append("head \(head.status.code) connection=\(head.headerFields[.connection] ?? "")")
            case .body(let bytes): parts.append(String(buffer: bytes))
            case .end: parts.append("end")
            }
        }
        return parts
    }

    @Test func aStreamIsOpenedWrittenOnWakeUpsAndEndedWithItsConnection() async throws {
        let channel = EmbeddedChannel()
        try await channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).get()
        let stream = TextStream()
        let connection = LiveConnection(channel: channel) { _, _ in
            LiveHandoff.current?.take(stream)
            return Response(
                status: .ok, body: ResponseBody { writer in try await writer.write(ByteBuffer(string: "opening")) })
        }
        await connection.serve(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/live"))
        #expect(stream.state.withLock { $0.onPipeline } == true)
        // Said up front: the client never pools a stream's connection.
        #expect(try Self.written(channel) == ["head 200 connection=close", "opening"])

        // Each wake-up's news is written on the event loop, without a task.
        stream.wake("one")
        stream.wake("two")  // before the loop ran: written with the first
        channel.embeddedEventLoop.run()
        #expect(try Self.written(channel) == ["onetwo"])
        stream.wake("three")
        channel.embeddedEventLoop.run()
        #expect(try Self.written(channel) == ["three"])

        // The stream ends: the response ends, the connection closes, nothing more is written.
        stream.finish()
        channel.embeddedEventLoop.run()
        #expect(try Self.written(channel) == ["end"])
        #expect(stream.state.withLock { $0.closed })
        #expect(!channel.isActive)
        stream.wake("late")
        channel.embeddedEventLoop.run()
        #expect(try Self.written(channel) == [])
    }

    @Test func aRefusedLiveRequestIsAnsweredWholeAndClosed() async throws {
        let channel = EmbeddedChannel()
        try await channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).get()
        let connection = LiveConnection(channel: channel) { _, _ in
            Response(status: .unauthorized, body: ResponseBody(byteBuffer: ByteBuffer(string: "{}")))
        }
        await connection.serve(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/live"))
        #expect(try Self.written(channel) == ["head 401 connection=close", "{}", "end"])
        #expect(!channel.isActive)
    }
}
