import Hummingbird
import NIOCore
import NIOHTTPTypes

/// A response body written straight to a connection's channel: what a live stream served on its
/// connection's pipeline writes through (``LiveConnection``). Each write waits until the socket took
/// it, so a client that does not read holds the writer back (and the stall bound can end it); only
/// on the channel's own event loop, where the channel's writability is exact, is a write to a
/// writable channel handed over without waiting. (Asked from a task, writability lags the writes
/// still queued for the loop: under load a catch-up queued a 12 MB log that way, past every bound.)
/// A write that fails fails because the connection closed, which ends the stream.
struct ChannelBodyWriter: ResponseBodyWriter {
    let channel: any Channel

    mutating func write(_ buffer: ByteBuffer) async throws {
        if channel.eventLoop.inEventLoop, channel.isWritable {
            channel.writeAndFlush(HTTPResponsePart.body(buffer), promise: nil)
        } else {
            try await channel.writeAndFlush(HTTPResponsePart.body(buffer)).get()
        }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await channel.writeAndFlush(HTTPResponsePart.end(trailingHeaders)).get()
    }
}
