import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// One HTTP/1.1 connection's part of ``PushFastPath``, between Hummingbird's connection-state
/// handler and its connection task: a push the fast path takes is answered here, on the event loop;
/// every other request passes through to Hummingbird untouched, and so does a taken push that the
/// fast path hands back (the router then answers it, from its head and the body read so far).
///
/// Answers leave in the order requests came, as HTTP/1.1 requires: a push is taken only while
/// Hummingbird owes no answer on the connection, and what arrives while a taken push waits for its
/// commit waits here, and is served after its answer (no more is read until then).
final class PushFastPathHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let fastPath: PushFastPath

    /// The request being read.
    private enum Current {
        case none
        /// Passing through to Hummingbird.
        case forwarded
        /// A push taken here, its body so far.
        case taken(HTTPRequest, UnconfirmedToken, ByteBuffer)
    }

    private var current = Current.none
    /// Requests passed to Hummingbird whose answer has not ended.
    private var owedByRouter = 0
    /// A taken push is waiting for its commit.
    private var storing = false
    /// What arrived while a push was being stored, in order.
    private var held: [HTTPRequestPart] = []
    /// A read asked for while a push was being stored and what arrived meanwhile waits.
    private var readDeferred = false
    private var active = true
    /// The connection's peer address, worked out at its first push.
    private var peer: String?

    init(fastPath: PushFastPath) {
        self.fastPath = fastPath
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if storing || !held.isEmpty {
            held.append(part)
        } else {
            handle(part, context: context)
        }
    }

    /// Reads go on while a push is stored, until something arrives meanwhile: then nothing more is
    /// read until it has been served. (A client that waits for each answer never sends meanwhile, and
    /// its connection keeps its interest in reading: no change to the event loop's poll set per push.)
    func read(context: ChannelHandlerContext) {
        if storing, !held.isEmpty { readDeferred = true } else { context.read() }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { owedByRouter = max(0, owedByRouter - 1) }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        active = false
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        active = false
    }

    private func handle(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch (part, current) {
        case (.head(let head), _):
            if owedByRouter == 0, let token = fastPath.takes(head) {
                current = .taken(head, token, context.channel.allocator.buffer(capacity: 0))
            } else {
                current = .forwarded
                owedByRouter += 1
                context.fireChannelRead(wrapInboundOut(part))
            }
        case (.body(var bytes), .taken(let head, let token, var body)):
            // Past what this path parses on the loop (a chunked body has no length to tell by): the
            // router reads the rest and answers it — or refuses it `413` past the body limit.
            guard body.readableBytes + bytes.readableBytes <= PushFastPath.largestBody else {
                current = .forwarded
                forward(head, body: body, end: false, context: context)
                context.fireChannelRead(wrapInboundOut(part))
                return
            }
            current = .none  // the buffer is not shared while it grows
            if body.readableBytes == 0 {
                body = bytes  // a body in one part is kept as it came, not copied
            } else {
                body.writeBuffer(&bytes)
            }
            current = .taken(head, token, body)
        case (.end, .taken(let head, let token, let body)):
            current = .none
            serve(head, token: token, body: body, context: context)
        case (.end, _):
            current = .none
            context.fireChannelRead(wrapInboundOut(part))
        case (.body, _):
            context.fireChannelRead(wrapInboundOut(part))
        }
    }

    /// Stores the push and answers it on this loop, or hands it to the router.
    private func serve(_ head: HTTPRequest, token: UnconfirmedToken, body: ByteBuffer, context: ChannelHandlerContext) {
        let peer = self.peer ?? context.channel.remoteAddress?.ipAddress
        self.peer = peer
        guard let accepted = fastPath.accept(head, body: body, token: token, peer: peer) else {
            return forward(head, body: body, end: true, context: context)
        }
        storing = true
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        fastPath.store(accepted, token: token) { result in
            loop.execute {
                let (handler, context) = bound.value
                let text = handler.fastPath.answer(result, accepted, token: token)
                handler.stored(text, head: head, body: body, context: context)
            }
        }
    }

    private func stored(_ text: String?, head: HTTPRequest, body: ByteBuffer, context: ChannelHandlerContext) {
        storing = false
        guard active else { return }
        if let text {
            let answer = context.channel.allocator.buffer(string: text)
            context.write(wrapOutboundOut(.head(fastPath.head(contentLength: answer.readableBytes))), promise: nil)
            context.write(wrapOutboundOut(.body(answer)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            // Nothing of it was stored: the router answers it (a revoked token's `401`, the store's error).
            forward(head, body: body, end: true, context: context)
        }
        if !held.isEmpty {
            while !storing, !held.isEmpty {
                handle(held.removeFirst(), context: context)
            }
            // Hummingbird's task takes what it was passed at the end of a read.
            context.fireChannelReadComplete()
        }
        if !storing, readDeferred {
            readDeferred = false
            context.read()
        }
    }

    /// Passes a request this handler read to the router, as it came.
    private func forward(_ head: HTTPRequest, body: ByteBuffer, end: Bool, context: ChannelHandlerContext) {
        owedByRouter += 1
        context.fireChannelRead(wrapInboundOut(.head(head)))
        if body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(body))) }
        if end { context.fireChannelRead(wrapInboundOut(.end(nil))) }
        context.fireChannelReadComplete()
    }
}
