import Hummingbird
import NIOCore
import NIOHTTPTypes

/// A response body written straight to a connection's channel: what a live stream served on its
/// connection's pipeline writes through (``LiveConnection``). While the channel is writable a write
/// is handed over without waiting; once the client stops reading (the channel's buffer is full) each
/// write waits until the socket took it, so a slow reader holds the writer back. (A write that fails
/// fails because the connection closed, which ends the stream.)
struct ChannelBodyWriter: ResponseBodyWriter {
    let channel: any Channel

    mutating func write(_ buffer: ByteBuffer) async throws {
        if channel.isWritable {
            channel.writeAndFlush(HTTPResponsePart.body(buffer), promise: nil)
        } else {
            try await channel.writeAndFlush(HTTPResponsePart.body(buffer)).get()
        }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await channel.writeAndFlush(HTTPResponsePart.end(trailingHeaders)).get()
    }
}
