import Foundation
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle
import TipSyncCore

/// Builds the sync server: the seam tests call directly (`app.test(.router)` / `.live`).
///
/// Bootstrapping logging and metrics belongs to `main`, which runs once; this may be called many times.
public func buildApplication(
    address: BindAddress = .hostname("127.0.0.1", port: 8080),
    store: any SyncStore,
    configuration: ServerConfiguration = ServerConfiguration(),
    notifier: ChangeNotifier = ChangeNotifier(),
    registry: PrometheusCollectorRegistry? = nil,
    now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
    logger: Logger = Logger(label: "tipsync-server")
) -> some ApplicationProtocol {
    let router = buildRouter(
        store: store, configuration: configuration, notifier: notifier, registry: registry, now: now)
    return Application(
        router: router,
        configuration: .init(address: address, serverName: "tipsync-server"),
        services: [NotifierShutdown(notifier: notifier)],
        logger: logger)
}

/// The server's routes and middleware without a listener: what ``buildApplication`` serves, and
/// what the conflict-replay simulator calls directly (no sockets, injected time).
public func buildRouter(
    store: any SyncStore,
    configuration: ServerConfiguration = ServerConfiguration(),
    notifier: ChangeNotifier = ChangeNotifier(),
    registry: PrometheusCollectorRegistry? = nil,
    now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
) -> Router<SyncRequestContext> {
    let router = Router(context: SyncRequestContext.self)
    router.addMiddleware {
        ErrorMiddleware(now: now)
        MetricsMiddleware()
        LogRequestsMiddleware(.debug)
    }
    router.get("health") { _, _ -> Response in
        SyncController.json(text: #"{"status":"ok"}"#)
    }
    router.get("metrics") { _, _ -> Response in
        var buffer: [UInt8] = []
        registry?.emit(into: &buffer)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
    }
    let v1 = router.group("v1").add(middleware: BearerAuthMiddleware(store: store))
    SyncController(store: store, notifier: notifier, configuration: configuration, now: now, metrics: ServerMetrics())
        .addRoutes(to: v1)
    return router
}

/// Closes live streams when the server shuts down gracefully.
struct NotifierShutdown: Service {
    let notifier: ChangeNotifier

    func run() async throws {
        try? await gracefulShutdown()
        notifier.finishAll()
    }
}
