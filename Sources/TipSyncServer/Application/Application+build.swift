import Foundation
package import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import Metrics
import NIOCore
import Prometheus
import ServiceLifecycle
import TipSyncCore
import TipSyncDeviceService
import TipSyncNetworking
import TipSyncOperatorService

/// Builds the sync server: the seam tests call directly (`app.test(.router)` / `.live`).
///
/// Bootstrapping logging and metrics belongs to `main`, which runs once; this may be called many times.
package func buildApplication(configuration: ServerConfiguration, dependencies: ServerDependencies)
    -> some ApplicationProtocol
{
    let (store, notifier, activity, jwt, registry, now, logger) = (
        dependencies.store, dependencies.notifier, dependencies.activity, dependencies.jwt, dependencies.registry,
        dependencies.now, dependencies.logger
    )
    let metrics = ServerMetrics(registry: registry)
    // Which allocator serves `malloc`: mimalloc, linked with the server on Linux (Package.swift).
    Gauge(label: "tipsync_allocator_info", dimensions: [("allocator", SystemAllocator.name)], factory: metrics.factory)
        .record(1)
    let memory =
        configuration.memoryReleaseInterval > .zero
        ? MemoryRelease(
            interval: configuration.memoryReleaseInterval, store: store,
            logger: logger, factory: metrics.factory) : nil
    let compactor = AutoCompactor(
        store: store, threshold: configuration.autoCompactAfter, metrics: metrics, logger: logger, memory: memory)
    let router = buildRouter(
        store: store, configuration: configuration, notifier: notifier, activity: activity, jwt: jwt,
        compactor: compactor, memory: memory, registry: registry, metrics: metrics, tokens: dependencies.tokens,
        costlyWork: dependencies.costlyWork, readiness: dependencies.readiness, logger: logger, now: now)
    let limits = ConnectionGuard.Limits(
        requestHead: .nanoseconds(configuration.requestHeadTimeout.wholeNanoseconds),
        requestBody: .nanoseconds(configuration.requestBodyTimeout.wholeNanoseconds),
        maxBodyBytes: configuration.maxBodyBytes)
    let openFiles = Int(clamping: FileDescriptorLimit.current().soft)
    let maxConnections = configuration.maxConnections ?? max(64, openFiles - 256)
    let idle = IdleConnections()
    var services: [any Service] = [
        NotifierShutdown(notifier: notifier),
        StoreChangeListener(store: store, notifier: notifier, logger: logger, readiness: dependencies.readiness),
        BackgroundCheckpoints(store: store),
        LiveHeartbeat(notifier: notifier, interval: configuration.heartbeat),
        OpenFilesMonitor(
            interval: .seconds(5), maxConnections: maxConnections, logger: logger, factory: metrics.factory),
        DeviceActivityFlusher(activity: activity, store: store, interval: .seconds(5), logger: logger, memory: memory),
        compactor, TipUsageSummarizer(store: store, interval: .seconds(2), logger: logger, memory: memory),
    ]
    services.append(JWTKeyReloader(signIn: jwt, interval: .seconds(2), logger: logger))
    services.append(CatalogWatch(store: store, notifier: notifier, interval: .milliseconds(500), logger: logger))
    if let memory { services.append(memory) }
    let responder = AdmittedResponder(
        base: router.buildResponder(),
        admission: RequestAdmission(limit: configuration.requestsInFlight, waiting: metrics.requestsWaiting))
    let serverName = "tipsync-server"
    // What Hummingbird's connection task does with a request, for the live streams served on their
    // connection's pipeline instead (``SyncServerChannel``).
    let respondLive: LiveConnection.Respond = { request, channel in
        var logger = logger
        logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        let context = SyncRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        var response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch {
            response = Response(status: .internalServerError)
        }
        response.headers[.date] = HTTPDate.cached(Date())
        response.headers[.server] = serverName
        return response
    }
    let connectionMetrics = metrics.connections
    var application = Application(
        responder: responder,
        server: HTTPServerBuilder { appResponder -> any ServerChildChannel in
            // What the router's middleware would add, on what the connection layer refuses itself.
            let cors = CORSMiddleware<SyncRequestContext>(origins: configuration.corsOrigins)
            let refusalHeaders: @Sendable (HTTPRequest?) -> HTTPFields = { request in
                let path = String((request?.path ?? "").prefix { $0 != "?" })
                var headers = cors.answerHeaders(origin: request?.headerFields[.origin], path: path)
                headers.append(contentsOf: SecurityHeadersMiddleware<SyncRequestContext>.headers(path: path))
                return headers
            }
            // The access log's line for a request refused here, as the router's requests get one.
            let accessLevel: Logger.Level = configuration.accessLog ? .info : .debug
            let logRefusal: @Sendable (HTTPRequest?, HTTPResponse.Status) -> Void = { request, status in
                RequestLogMiddleware<SyncRequestContext>.log(
                    to: logger, level: accessLevel, method: request?.method.rawValue ?? "-",
                    target: URI(request?.path ?? "-"), status: status, duration: .zero,
                    refusedBy: "connection")
            }
            let channel = SyncServerChannel(
                http1: HTTP1Channel(
                    responder: appResponder,
                    configuration: .init(additionalChannelHandlers: [
                        ConnectionGuard(
                            limits: limits, metrics: connectionMetrics, idle: idle, now: now,
                            refusalHeaders: refusalHeaders, onRefusal: logRefusal)
                    ])),
                limits: limits, metrics: connectionMetrics, idle: idle, respondLive: respondLive)
            // `--tls-certificate`: TLS first on every connection, then the same HTTP/1.1 handlers.
            guard let tls = configuration.tls else { return channel }
            return try TLSChannel(channel, tlsConfiguration: try tls.serverConfiguration())
        },
        configuration: .init(
            address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: serverName,
            backlog: configuration.listenBacklog,
            availableConnectionsDelegate: ConnectionCounter(
                maximum: maxConnections, idle: idle, logger: logger, factory: metrics.factory)),
        services: services,
        onServerRunning: { [readiness = dependencies.readiness, running = dependencies.onServerRunning] channel in
            readiness.holds(.accepting)
            await running(channel)
        },
        logger: logger)
    // A restart's devices all come back at once: their tokens are remembered before the first.
    let warmup = TokenIdentityWarmup(store: store, tokens: dependencies.tokens, logger: logger)
    application.beforeServerStarts { await warmup.run() }
    return application
}

/// The server's routes and middleware without a listener: what ``buildApplication`` serves, and
/// what the conflict-replay simulator calls directly (no sockets, injected time).
package func buildRouter(configuration: ServerConfiguration, dependencies: ServerDependencies)
    -> Router<SyncRequestContext>
{
    buildRouter(
        store: dependencies.store, configuration: configuration, notifier: dependencies.notifier,
        activity: dependencies.activity, jwt: dependencies.jwt, compactor: nil, memory: nil,
        registry: dependencies.registry, metrics: ServerMetrics(registry: dependencies.registry),
        tokens: dependencies.tokens, costlyWork: dependencies.costlyWork, readiness: dependencies.readiness,
        logger: dependencies.logger, now: dependencies.now)
}

func buildRouter(
    store: any SyncStore, configuration: ServerConfiguration, notifier: ChangeNotifier,
    activity: DeviceActivity,
    jwt: JWTSignIn?, compactor: AutoCompactor?, memory: MemoryRelease?, registry: PrometheusCollectorRegistry?,
    metrics: ServerMetrics, tokens: TokenIdentityCache, costlyWork: CostlyWork = .shared, readiness: Readiness,
    logger: Logger = Logger(label: "tipsync-server"), now: @escaping @Sendable () -> Int64
) -> Router<SyncRequestContext> {
    let router = Router(context: SyncRequestContext.self)
    let table = RouteTable()
    let history = RequestHistory()
    let requestMetrics = RequestMetricsCache(factory: metrics.factory)
    // Added before the routes, so it wraps them all (and requests no route matched).
    router.addMiddleware {
        // Outside ErrorMiddleware, so error answers carry the CORS and security headers too.
        CORSMiddleware(origins: configuration.corsOrigins)
        SecurityHeadersMiddleware()
        ErrorMiddleware(now: now)
        RequestLogMiddleware(level: configuration.accessLog ? .info : .debug)
        RequestMetricsMiddleware(cache: requestMetrics)
        MethodMiddleware(table: table)
        RequestHistoryMiddleware(history: history, now: now)
    }
    if let memory { router.add(middleware: ActivityMiddleware(memory: memory)) }
    if !configuration.console { router.add(middleware: ConsoleOffMiddleware()) }
    router.on("health", method: .get, recordingIn: table) { _, _ -> Response in
        let version = #""version":"\#(TipSyncVersion.release)","protocol":"\#(TipSyncVersion.protocolRevision)""#
        return SyncController.json(text: #"{"status":"ok",\#(version)}"#)
    }
    // Ready only once devices' streams are served here (``Readiness``): what a load balancer asks.
    router.on("ready", method: .get, recordingIn: table) { _, _ -> Response in
        let waiting = readiness.waitingFor
        guard !waiting.isEmpty else { return SyncController.json(text: #"{"status":"ready"}"#) }
        let names = waiting.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
        var response = SyncController.json(text: #"{"status":"starting","waitingFor":[\#(names)]}"#)
        response.status = .serviceUnavailable
        response.headers[.retryAfter] = "1"
        return response
    }
    router.on("metrics", method: .get, recordingIn: table) { request, _ -> Response in
        if let token = configuration.metricsToken {
            // `--metrics-token`: only a scraper that sends it (Prometheus: `authorization.credentials`).
            guard let sent = BearerCredential(request)?.token, ConstantTime.equal(sent, token) else {
                throw SyncError.unauthorized("/metrics needs Authorization: Bearer with the metrics token")
            }
        }
        metrics.process.record()
        var buffer: [UInt8] = []
        registry?.emit(into: &buffer)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
    }
    let requestLimiter = RateLimiter<DeviceIdentity>(configuration.requestRate)
    let changeLimiter = RateLimiter<DeviceIdentity>(configuration.changeRate)
    let bodyByteLimiter = RateLimiter<DeviceIdentity>(configuration.bodyByteRate)
    let readByteLimiter = RateLimiter<DeviceIdentity>(configuration.readByteRate)
    memory?.onRelease { requestLimiter.forgetRefilled(now: now()) }
    memory?.onRelease { changeLimiter.forgetRefilled(now: now()) }
    memory?.onRelease { bodyByteLimiter.forgetRefilled(now: now()) }
    memory?.onRelease { readByteLimiter.forgetRefilled(now: now()) }
    let signIns = SignInThrottle(
        rate: configuration.failedSignInRate, trustedProxies: configuration.trustedProxies, factory: metrics.factory)
    memory?.onRelease { signIns.forgetRefilled(now: now()) }
    memory?.onRelease { [tokens] in tokens.forgetAll() }
    memory?.onRelease { ResponseDeflater.shared.forgetIdle() }
    let auth = BearerAuthMiddleware(
        store: store, tokens: tokens, jwt: jwt, activity: activity, signIns: signIns,
        maxClockSkew: configuration.maxClockSkew.wholeMilliseconds, now: now,
        unknownTokens: UnknownTokenWatch(logger: logger))
    let v1 = router.group("v1")
        .add(middleware: auth)
        .add(
            middleware: RateLimitMiddleware(
                limiter: requestLimiter, metrics: metrics, now: now, refusalDelay: configuration.rateRefusalDelay))
    let sync = SyncController(
        store: store, notifier: notifier, limits: configuration.syncRouteLimits, now: now, metrics: metrics,
        changeLimiter: changeLimiter, bodyByteLimiter: bodyByteLimiter, readByteLimiter: readByteLimiter,
        costlyWork: costlyWork,
        compactor: compactor, activity: activity)
    sync.addRoutes(to: v1, table: table)
    CatalogController(store: store).addRoutes(to: v1, table: table)
    let admin = router.group("admin/v1").add(middleware: AdminAuthMiddleware(store: store, signIns: signIns, now: now))
    let adminController = AdminController(store: store, notifier: notifier, activity: activity, now: now)
    adminController.addRoutes(to: admin, table: table)
    ExperimentController(admin: adminController).addRoutes(to: admin, table: table)
    if configuration.console {
        // The templates are constants compiled into the server; a test renders every one.
        let library = try! ConsoleTemplates.library()
        ConsoleController(
            store: store, admin: adminController, sessions: ConsoleSessions(store: store), history: history,
            notifier: notifier,
            library: library, signIns: signIns, now: now
        ).addRoutes(to: router, table: table)
    }
    return router
}
