import Hummingbird
package import HummingbirdCore
package import Logging
package import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The server's connections: HTTP/1.1 served by Hummingbird (``HTTP1Channel``), except a connection
/// whose first request is `GET /v1/live`, which is served on its pipeline (``LiveConnectionHandler``).
///
/// Hummingbird serves each connection from a task that reads it until it closes; for a live stream,
/// open for hours and mostly idle, that task and its channel wrapper are most of what the connection
/// costs (docs/benchmark-history.md, ninth and tenth rounds). Until its first bytes arrive a connection has only
/// a ``FirstRequestSniffer``; then it gets either Hummingbird's handlers and task, or the same HTTP
/// codecs and ``ConnectionGuard`` with the live handler, and its task ends. A live stream requested
/// on a connection that served other requests first stays on Hummingbird's task (it works the same;
/// it costs more memory while open).
package struct SyncServerChannel: ServerChildChannel {
    package struct Value: ServerChildChannelValue {
        package let channel: any Channel
        /// Hummingbird's channel once the first request showed the connection is its to serve; `nil`
        /// when it is a live stream served on its pipeline, or closed before it asked anything.
        let http: EventLoopFuture<HTTP1Channel.Value?>
    }

    let http1: HTTP1Channel
    let limits: ConnectionGuard.Limits
    let metrics: ConnectionMetrics
    let idle: IdleConnections
    let respondLive: LiveConnection.Respond

    package init(
        http1: HTTP1Channel, limits: ConnectionGuard.Limits, metrics: ConnectionMetrics, idle: IdleConnections,
        respondLive: @escaping LiveConnection.Respond
    ) {
        self.http1 = http1
        self.limits = limits
        self.metrics = metrics
        self.idle = idle
        self.respondLive = respondLive
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let http = channel.eventLoop.makePromise(of: HTTP1Channel.Value?.self)
            let sniffer = FirstRequestSniffer(
                limits: limits, metrics: metrics, idle: idle,
                install: { route, _ in
                    switch route {
                    case .http:
                        let served = http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
                            let pipeline = channel.pipeline.syncOperations
                            let codec = try pipeline.context(handlerType: HTTP1ToHTTPServerCodec.self)
                            try pipeline.addHandler(KeepAliveRequest(), position: .before(codec.handler))
                            return value
                        }
                        served.whenComplete { http.completeWith($0.map(Optional.some)) }
                        return served.map { _ in }
                    case .live:
                        http.succeed(nil)
                        return channel.eventLoop.makeCompletedFuture { try installLive(on: channel) }
                    }
                },
                abandoned: { http.succeed(nil) })
            try channel.pipeline.syncOperations.addHandler(sniffer)
            return Value(channel: channel, http: http.futureResult)
        }
    }

    package func handle(value: Value, logger: Logger) async {
        guard let served = try? await value.http.get() else { return }
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await http1.handle(value: served, logger: logger)
        }
    }

    /// The handlers Hummingbird's HTTP/1.1 channel installs, with the live handler in place of its
    /// connection task.
    private func installLive(on channel: any Channel) throws {
        let decoder = http1.configuration.httpDecoder
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = decoder.maxHeaderFieldSize
        limits.maxHeaderListSize = decoder.maxHeaderListSize
        limits.maxHeaderFieldCount = decoder.maxHeaderFieldCount
        let pipeline = channel.pipeline.syncOperations
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false,
            withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits)
        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try pipeline.addHandlers(http1.configuration.additionalChannelHandlers())
        try pipeline.addHandler(LiveConnectionHandler(respond: respondLive))
    }
}
