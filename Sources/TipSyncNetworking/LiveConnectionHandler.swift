import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The last handler of a connection whose first request is `GET /v1/live` (``FirstRequestSniffer``):
/// it reads that request and hands it to a ``LiveConnection``, which answers it and writes the stream.
/// Anything the client sends after the request is dropped unparsed: the request's parser leaves the
/// pipeline once the request is read (its state and buffers would stay with the idle stream for hours).
/// The connection closes when the answer ends.
final class LiveConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart

    private let respond: LiveConnection.Respond
    private var head: HTTPRequest?
    private var connection: LiveConnection?

    init(respond: @escaping LiveConnection.Respond) {
        self.respond = respond
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard connection == nil else { return }
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            let connection = LiveConnection(channel: context.channel, respond: respond)
            self.connection = connection
            Task { await connection.serve(head) }
            Self.dropFurtherRequests(context.pipeline.syncOperations)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            if let connection { connection.quiesce() } else { context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Replaces the request parser with a handler that drops the bytes it would have parsed.
    private static func dropFurtherRequests(_ pipeline: ChannelPipeline.SynchronousOperations) {
        guard let parser = try? pipeline.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self) else {
            return
        }
        guard (try? pipeline.addHandler(Dropper(), position: .after(parser.handler))) != nil else { return }
        pipeline.removeHandler(context: parser, promise: nil)
    }

    /// Drops what the client sends after its live request.
    private final class Dropper: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
        func channelReadComplete(context: ChannelHandlerContext) {}
    }
}
