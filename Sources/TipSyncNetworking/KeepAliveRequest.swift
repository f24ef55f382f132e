import NIOCore
import NIOHTTP1

/// Makes a request's wish to close its connection explicit before Hummingbird reads it: an HTTP/1.0
/// request without `Connection: keep-alive` (HTTP/1.0's default is to close) gets `Connection: close`,
/// which Hummingbird honours by closing after its answer. The version is gone once the request is
/// converted to `HTTPRequest`, so Hummingbird kept such connections open until the head timeout
/// (issue 59, item 6).
final class KeepAliveRequest: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), !head.isKeepAlive,
            !head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "close" })
        else { return context.fireChannelRead(data) }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
