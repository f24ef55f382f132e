import Hummingbird
import NIOCore
import NIOHTTPTypes

/// A response body written straight to a connection's channel, each write awaited until the socket
/// took it (so a reader that stops reading holds the writer back): what a live stream served on its
/// connection's pipeline writes through (``LiveConnection``).
struct ChannelBodyWriter: ResponseBodyWriter {
    let channel: any Channel

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await channel.writeAndFlush(HTTPResponsePart.body(buffer)).get()
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await channel.writeAndFlush(HTTPResponsePart.end(trailingHeaders)).get()
    }
}
