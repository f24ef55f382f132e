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

    /// Where a connection's first request goes.
    enum Route: Equatable, Sendable {
        case http
        case live
    }

    private static let live = Array("GET /v1/live".utf8)

    /// The route of a connection whose first bytes are `bytes`; `nil` until they tell.
    static func route(of bytes: some Collection<UInt8>) -> Route? {
        var index = bytes.startIndex
        for expected in live {
            guard index != bytes.endIndex else { return nil }
            guard bytes[index] == expected else { return .http }
            index = bytes.index(after: index)
        }
        guard index != bytes.endIndex else { return nil }
        // `GET /v1/live HTTP/1.1` or `GET /v1/live?cursor=…`, not `GET /v1/lively`.
        return bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "?") ? .live : .http
    }

    private let limits: ConnectionGuard.Limits
    private let metrics: ConnectionMetrics
    private let idle: IdleConnections
    /// Installs the handlers for `route` behind this one; completes when they are in place.
    private let install: (Route, ChannelHandlerContext) -> EventLoopFuture<Void>
    /// The connection closed before its first request showed where it goes.
    private let abandoned: () -> Void
    private var buffered: ByteBuffer?
    private var timer: Scheduled<Void>?
    private var decided = false
    /// When the connection opened: the request head's deadline counts from here, in this handler
    /// and in the ``ConnectionGuard`` it hands over to.
    private var openedAt: NIODeadline?

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
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var buffered {
            buffered.writeBuffer(&bytes)
            self.buffered = buffered
        } else {
            buffered = bytes
        }
        guard !decided, let route = buffered.flatMap({ Self.route(of: $0.readableBytesView) }) else { return }
        decided = true
        timer?.cancel()
        timer = nil
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        install(route, context).whenComplete { result in
            let (sniffer, context) = loopBound.value
            guard case .success = result else {
                context.close(promise: nil)
                return
            }
            if let openedAt = sniffer.openedAt {
                context.fireUserInboundEventTriggered(ConnectionGuard.ConnectionOpened(at: openedAt))
            }
            if let buffered = sniffer.buffered {
                sniffer.buffered = nil
                context.fireChannelRead(sniffer.wrapInboundOut(buffered))
                context.fireChannelReadComplete()
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Before the decision the handlers behind have nothing to complete.
        if decided { context.fireChannelReadComplete() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !decided else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // The peer left before its request (half-closed), or the server is shutting down.
        if event is ChannelShouldQuiesceEvent || (event as? ChannelEvent) == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !decided else {
            context.fireErrorCaught(error)
            return
        }
        context.close(promise: nil)
    }

    private func opened(context: ChannelHandlerContext) {
        guard timer == nil, !decided else { return }
        openedAt = context.eventLoop.now
        idle.opened(context.channel)
        let metrics = metrics
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: limits.requestHead) {
            metrics.headTimeouts.increment()
            loopBound.value.close(promise: nil)
        }
    }

    private func closed(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        idle.spoke(context.channel)
        if !decided {
            decided = true
            abandoned()
        }
    }
}
