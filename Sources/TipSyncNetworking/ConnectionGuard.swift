import CoreMetrics
import Foundation
package import Hummingbird
import HummingbirdCore
import Logging
package import NIOCore
import NIOHTTP1
package import NIOHTTPTypes
import TipSyncCore

/// Per-connection limits enforced below the router, so that one client cannot hold the server's
/// resources: it closes a connection whose request head does not arrive in time (nothing sent, a
/// CRLF, junk, a slow-loris trickle), whose body does not arrive in time (a declared length never
/// sent, a chunked body that never ends), or whose peer has closed its side (FIN) — at once, so a
/// long-poll's descriptor is released when its client leaves. A declared `Content-Length` above the
/// body limit is refused at once with `413 body_too_large`, and a request the HTTP parser cannot read
/// — its head, or its body's chunked framing before any answer began — with `400 malformed_request`
/// (an unknown method, or `CONNECT`: `405 method_not_allowed`), all as JSON and closing the
/// connection. A request head with `Expect: 100-continue` gets the interim `100 Continue` at once.
/// Its reads start at 512 bytes (``setReadSizes(_:)``).
///
/// One instance per connection; it lives on the connection's event loop.
package final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    package struct Limits: Sendable {
        /// From the connection's start, or the end of its previous response, to a complete request head.
        package var requestHead: TimeAmount
        /// From a request head to the end of its body.
        package var requestBody: TimeAmount
        package var maxBodyBytes: Int

        package init(requestHead: TimeAmount, requestBody: TimeAmount, maxBodyBytes: Int) {
            self.requestHead = requestHead
            self.requestBody = requestBody
            self.maxBodyBytes = maxBodyBytes
        }
    }

    private let limits: Limits
    private let metrics: ConnectionMetrics
    /// Connections that have not sent a request yet, evicted oldest first at the connection limit.
    private let idle: IdleConnections
    private let now: @Sendable () -> Int64
    /// Headers the router's answers carry that a refusal here must carry too (issue 75, item 5: a
    /// browser refused below the router saw a CORS failure, not the 413): CORS for an allowed
    /// origin, `nosniff`. Given the refused request's head when there is one.
    private let refusalHeaders: @Sendable (HTTPRequest?) -> HTTPFields
    /// Told of each refusal (the request's head when there is one, the status): the access log
    /// writes it as it writes the router's answers.
    private let onRefusal: @Sendable (HTTPRequest?, HTTPResponse.Status) -> Void
    /// The timer that checks the state's deadline, and when it fires. It is not moved for each
    /// request: a deadline later than the timer is checked again when the timer fires (and the timer
    /// set for it then), so a keep-alive connection's requests arm and disarm without scheduling anything.
    private var timer = ConnectionTimer<ConnectionGuard>()
    private var timerFires = NIODeadline.distantFuture
    /// Deadlines, open requests, whether one was refused (``ConnectionGuardState``).
    private var state: ConnectionGuardState

    package init(
        limits: Limits, metrics: ConnectionMetrics, idle: IdleConnections, now: @escaping @Sendable () -> Int64,
        refusalHeaders: @escaping @Sendable (HTTPRequest?) -> HTTPFields = { _ in HTTPFields() },
        onRefusal: @escaping @Sendable (HTTPRequest?, HTTPResponse.Status) -> Void = { _, _ in }
    ) {
        self.refusalHeaders = refusalHeaders
        self.onRefusal = onRefusal
        self.limits = limits
        self.state = ConnectionGuardState(
            requestHead: limits.requestHead, requestBody: limits.requestBody, maxBodyBytes: limits.maxBodyBytes)
        self.metrics = metrics
        self.idle = idle
        self.now = now
    }

    /// Reads start at 512 bytes and grow as requests need (NIO starts at 2 KB): an idle live stream
    /// keeps its last read buffer for as long as it stays open. Called on the channel's event loop.
    static func setReadSizes(_ channel: any Channel) {
        try? channel.syncOptions?.setOption(
            ChannelOptions.recvAllocator,
            value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65_536))
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        Self.setReadSizes(context.channel)
        if context.channel.isActive {
            state.active(at: context.eventLoop.now)
            schedule(context: context)
            idle.opened(context.channel)
        }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        stopTimer()
        idle.spoke(context.channel)
    }

    package func channelActive(context: ChannelHandlerContext) {
        state.active(at: context.eventLoop.now)
        schedule(context: context)
        idle.opened(context.channel)
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        stopTimer()
        idle.spoke(context.channel)
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let action = state.requestHead(
                contentLength: head.headerFields[.contentLength], isConnect: head.method == .connect,
                expectsContinue: head.headerFields[.expect]?.lowercased() == "100-continue", at: context.eventLoop.now)
            if action == .drop { return }
            idle.spoke(context.channel)
            switch action {
            case .drop: return
            case .refuse(let refusal):
                refuse(refusal, request: head, context: context)
                return
            case .admit(let sendContinue):
                schedule(context: context)
                if sendContinue {
                    context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
                }
            }
        case .body:
            guard state.passesBody() else { return }
        case .end:
            guard state.requestEnd() else { return }
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let action: ConnectionGuardState.WriteAction =
            switch unwrapOutboundIn(data) {
            case .head(let head): state.answerHead(informational: head.status.kind == .informational)
            case .body: state.answerBody()
            case .end: state.answerEnd(at: context.eventLoop.now)
            }
        guard action == .write else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        // Only an answer's end arms a deadline (the next head's); heads and bodies leave it as it is.
        if case .end = unwrapOutboundIn(data) { schedule(context: context) }
        context.write(data, promise: promise)
    }

    /// What ``FirstRequestSniffer`` tells the guard as it hands a connection over: when the
    /// connection opened. The first request head's deadline counts from then — before, a request
    /// line sent slowly got the sniffer's time and then a whole `requestHead` more (10 s became ~15).
    struct ConnectionOpened: Sendable {
        let at: NIODeadline
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let opened = event as? ConnectionOpened {
            state.openedEarlier(at: opened.at)
            schedule(context: context)
            return
        }
        if let event = event as? ChannelEvent, event == .inputClosed {
            // The peer closed its side: nobody will read an answer (a long-poll or live client that
            // left). Release the descriptor now rather than when the wait or a heartbeat ends.
            metrics.peerClosed.increment()
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parseError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        metrics.malformed.increment()
        switch state.parseError(invalidMethod: parseError == .invalidMethod, description: "\(parseError)") {
        case .close: context.close(promise: nil)
        case .refuse(let refusal): refuse(refusal, context: context)
        }
    }

    // MARK: Timers

    /// Sets the timer for the state's deadline when it is not set or set for later. Times are the
    /// event loop's (`EventLoop.now`), so an `EmbeddedEventLoop` can move them in tests.
    private func schedule(context: ChannelHandlerContext) {
        guard let at = state.deadline?.at, !timer.isSet || timerFires > at else { return }
        schedule(at: at, context: context)
    }

    private func schedule(at: NIODeadline, context: ChannelHandlerContext) {
        timerFires = at
        timer.set(at: at, handler: self, context: context) { handler, context, generation in
            guard handler.timer.fired(generation) else { return }
            handler.timerFired(context: context)
        }
    }

    private func timerFired(context: ChannelHandlerContext) {
        switch state.timerFired(at: context.eventLoop.now) {
        case .none: break
        case .reschedule(let at): schedule(at: at, context: context)
        case .close(let phase):
            (phase == .head ? metrics.headTimeouts : metrics.bodyTimeouts).increment()
            context.close(promise: nil)
        }
    }

    private func stopTimer() {
        state.stopped()
        timer.forget()
    }

    // MARK: Refusing

    /// Answers `refusal` with the protocol's JSON error and closes the connection.
    private func refuse(
        _ refusal: ConnectionGuardState.Refusal, request: HTTPRequest? = nil, context: ChannelHandlerContext
    ) {
        let status: HTTPResponse.Status
        let code: ErrorCode
        let message: String
        var allow: String?
        switch refusal {
        case .declaredTooLarge(let declared):
            metrics.declaredTooLarge.increment()
            (status, code) = (.contentTooLarge, .bodyTooLarge)
            message =
                "the declared Content-Length \(declared.prefix(32)) is larger than the server's limit of "
                + "\(limits.maxBodyBytes) bytes; push smaller batches"
        case .connect:
            // A tunnel this server never opens; answered whole, and the connection closed (the
            // encoder would treat any answer to CONNECT as the start of one).
            (status, code) = (.methodNotAllowed, .methodNotAllowed)
            message = "CONNECT is not supported; this server answers GET, HEAD and POST"
            allow = "GET, HEAD, POST"
        case .unknownMethod:
            (status, code) = (.methodNotAllowed, .methodNotAllowed)
            message = "unknown HTTP method; this server answers GET, HEAD and POST"
            allow = "GET, HEAD, POST"
        case .malformed(let reason):
            (status, code) = (.badRequest, .malformedRequest)
            message = "the request is not HTTP/1.1 this server can read (\(reason)); the connection is closed"
        }
        let body = ErrorBody(error: .init(code: code.rawValue, message: message, serverTime: now())).bytes
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.contentLength] = String(body.count)
        headers[.connection] = "close"
        if let allow { headers[.allow] = allow }
        headers.append(contentsOf: refusalHeaders(request))
        onRefusal(request, status)
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
    }
}
