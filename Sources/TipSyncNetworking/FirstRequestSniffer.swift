import CoreMetrics
import NIOCore

/// The first handler of every connection, until its first bytes show where its first request goes:
/// a connection that opens with `GET /v1/live` is served on its pipeline (``LiveConnectionHandler``,
/// no task while its stream is idle), any other by Hummingbird's HTTP/1.1 connection task. It keeps
/// what it read, has the chosen handlers installed behind it, passes them those bytes and leaves.
///
/// Until then it stands in for ``ConnectionGuard``: the connection counts as one that has not spoken
/// (``IdleConnections``), is closed if the request line does not begin in time, and reads start at
/// 512 bytes.
final class FirstRequestSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    typealias Route = FirstRequestState.Route

    /// The route of a connection whose first bytes are `bytes`; `nil` until they tell.
    static func route(of bytes: some Collection<UInt8>) -> Route? { FirstRequestState.route(of: bytes) }

    private let limits: ConnectionGuard.Limits
    private let metrics: ConnectionMetrics
    private let idle: IdleConnections
    /// Installs the handlers for `route` behind this one; completes when they are in place.
    private let install: (Route, ChannelHandlerContext) -> EventLoopFuture<Void>
    /// The connection closed before its first request showed where it goes.
    private let abandoned: () -> Void
    /// What it read, whether it decided, when the connection opened (the request head's deadline
    /// counts from there, here and in the ``ConnectionGuard`` it hands over to).
    private var state = FirstRequestState()
    /// The request head's deadline (forgotten, never cancelled: ``ConnectionTimer``).
    private var timer = ConnectionTimer<FirstRequestSniffer>()

    init(
        limits: ConnectionGuard.Limits, metrics: ConnectionMetrics, idle: IdleConnections,
        install: @escaping (Route, ChannelHandlerContext) -> EventLoopFuture<Void>,
        abandoned: @escaping () -> Void
    ) {
        self.limits = limits
        self.metrics = metrics
        self.idle = idle
        self.install = install
        self.abandoned = abandoned
    }

    func handlerAdded(context: ChannelHandlerContext) {
        ConnectionGuard.setReadSizes(context.channel)
        if context.channel.isActive { opened(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        opened(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed(context: context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer.forget()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .install(let route) = state.read(unwrapInboundIn(data)) else { return }
        timer.forget()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        install(route, context).whenComplete { result in
            let (sniffer, context) = loopBound.value
            guard case .success = result else {
                context.close(promise: nil)
                return
            }
            guard let (openedAt, read) = sniffer.state.installed() else { return }
            if let openedAt {
                context.fireUserInboundEventTriggered(ConnectionGuard.ConnectionOpened(at: openedAt))
            }
            context.fireChannelRead(sniffer.wrapInboundOut(read))
            context.fireChannelReadComplete()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Before the decision the handlers behind have nothing to complete.
        if state.decided { context.fireChannelReadComplete() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The peer left before its request (half-closed), or the server is shutting down.
        if event is ChannelShouldQuiesceEvent || (event as? ChannelEvent) == .inputClosed, state.closesOnLeaving() {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !state.decided else {
            context.fireErrorCaught(error)
            return
        }
        context.close(promise: nil)
    }

    private func opened(context: ChannelHandlerContext) {
        guard state.opened(at: context.eventLoop.now) else { return }
        idle.opened(context.channel)
        timer.set(at: context.eventLoop.now + limits.requestHead, handler: self, context: context) {
            sniffer, context, generation in
            // Still waiting for the request line: its time is up.
            guard sniffer.timer.fired(generation), !sniffer.state.decided else { return }
            sniffer.metrics.headTimeouts.increment()
            context.close(promise: nil)
        }
    }

    private func closed(context: ChannelHandlerContext) {
        timer.forget()
        idle.spoke(context.channel)
        if state.closed() { abandoned() }
    }
}
