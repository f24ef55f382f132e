import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
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
        func immediate(_ news: String) -> ByteBuffer? { HTTPChunk.framed(ByteBuffer(string: news)) }
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

    /// A channel with a live connection's response handlers (NIO's HTTP/1.1 encoder and the
    /// HTTPTypes codec), so what it writes is read as bytes on the wire.
    static func channel() async throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([HTTPResponseEncoder(), HTTP1ToHTTPServerCodec(secure: false)])
        try await channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).get()
        return channel
    }

    /// What the channel wrote since last asked, write by write as it reaches the socket: the head's
    /// status line and `Connection` header, each chunk's bytes as they are framed (`5\r\nhello\r\n`), and
    /// `end` for the last chunk (or after a body of a declared length).
    static func written(_ channel: EmbeddedChannel) throws -> [String] {
        var parts: [String] = []
        var pending = ""
        while let bytes = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = bytes else { continue }
            pending += String(buffer: buffer)
        }
        // A head, then chunks; NIO writes a chunk's framing and bytes as separate writes, so parts
        // are read from the whole text.
        var rest = Substring(pending)
        while !rest.isEmpty {
            if rest.hasPrefix("HTTP/1.1 ") {
                let end = rest.range(of: "\r\n\r\n")!
                let head = rest[..<end.lowerBound]
                let status = head.dropFirst(9).prefix(3)
                let connection = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("connection:") }
                parts.append(
                    "head \(status) connection=\(connection.map { $0.dropFirst(11).trimmingCharacters(in: .whitespaces) } ?? "")"
                )
                rest = rest[end.upperBound...]
                // A body of a declared length, not chunked: the answer ends with it.
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                if let length, let count = Int(length.dropFirst(15).trimmingCharacters(in: .whitespaces)) {
                    let body = rest.utf8.prefix(count)
                    parts += [String(Substring(body)), "end"]
                    rest = rest[body.endIndex...]
                }
                continue
            }
            let sizeEnd = rest.range(of: "\r\n")!
            let size = Int(rest[..<sizeEnd.lowerBound], radix: 16)!
            let body = rest[sizeEnd.upperBound...].utf8.prefix(size)
            guard size > 0 else {
                parts.append("end")
                rest = rest[sizeEnd.upperBound...].dropFirst(2)
                continue
            }
            parts.append(String(Substring(body)))
            #expect(rest[body.endIndex...].hasPrefix("\r\n"), "a chunk ends with CRLF")
            rest = rest[body.endIndex...].dropFirst(2)
        }
        return parts
    }

    @Test func aRefusedLiveRequestIsAnsweredWholeAndClosed() async throws {
        let channel = try await Self.channel()
        let connection = LiveConnection(channel: channel) { _, _ in
            Response(status: .unauthorized, body: ResponseBody(byteBuffer: ByteBuffer(string: "{}")))
        }
        await connection.serve(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/live"))
        #expect(try Self.written(channel) == ["head 401 connection=close", "{}", "end"])
        #expect(!channel.isActive)
    }

    /// Records, at each flush, the writes it sends to the socket: one batch is one write there.
    final class FlushBatches: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = IOData
        typealias OutboundOut = IOData
        private var pending = 0
        /// Writes per flush that carried any.
        private(set) var batches: [Int] = []

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            pending += 1
            context.write(data, promise: promise)
        }

        func flush(context: ChannelHandlerContext) {
            if pending > 0 { batches.append(pending) }
            pending = 0
            context.flush()
        }
    }

    /// A response that hands `stream` to the connection, its body writing `opening` (nothing when empty).
    static func handingOff(_ stream: TextStream, opening: String) -> LiveConnection.Respond {
        { _, _ in
            LiveHandoff.current?.take(stream)
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream"],
                body: ResponseBody { writer in
                    if !opening.isEmpty { try await writer.write(ByteBuffer(string: opening)) }
                })
        }
    }

    @Test func theHeadLeavesWithTheOpeningInOneWrite() async throws {
        let channel = try await Self.channel()
        let batches = FlushBatches()
        try channel.pipeline.syncOperations.addHandler(batches, position: .first)
        let stream = TextStream()
        let connection = LiveConnection(channel: channel, respond: Self.handingOff(stream, opening: "ready"))
        await connection.serve(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/live"))
        channel.embeddedEventLoop.run()
        #expect(try Self.written(channel) == ["head 200 connection=close", "ready"])
        // The head, the chunk's size, its bytes and its CRLF: flushed together, not the head alone first.
        #expect(batches.batches.count == 1)
        #expect(stream.state.withLock { $0.onPipeline } == true)
    }

    @Test func aStreamWhoseOpeningWritesNothingStillSendsItsHead() async throws {
        let channel = try await Self.channel()
        let stream = TextStream()
        let connection = LiveConnection(channel: channel, respond: Self.handingOff(stream, opening: ""))
        await connection.serve(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/live"))
        channel.embeddedEventLoop.run()
        #expect(try Self.written(channel) == ["head 200 connection=close"])
        // News after it is framed below the head, as for any stream.
        stream.wake("hello")
        channel.embeddedEventLoop.run()
        #expect(try Self.written(channel) == ["hello"])
    }
}
