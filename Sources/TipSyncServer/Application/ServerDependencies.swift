import Foundation
import Logging
import NIOCore
import Prometheus

/// What the server runs with besides its settings: the store, the clock, shared state, and the hooks
/// tests use. ``buildApplication(configuration:dependencies:)`` takes this and a ``ServerConfiguration``.
public struct ServerDependencies: Sendable {
    /// The database (SQLite or PostgreSQL), opened and migrated.
    public var store: any SyncStore
    /// Wakes long-polls and live streams; share one between instances of a test to share wake-ups.
    public var notifier: ChangeNotifier
    /// Devices' last-seen times, flushed to the store every few seconds.
    public var activity: DeviceActivity
    /// JWT device sign-in, when ``ServerConfiguration/jwt`` names a key source.
    public var jwt: JWTSignIn?
    /// Where metrics go (`/metrics`); `nil` serves an empty page.
    public var registry: PrometheusCollectorRegistry?
    /// The server's clock, in milliseconds since 1970 (tests inject one).
    public var now: @Sendable () -> Int64
    /// The server's logger.
    public var logger: Logger
    /// Called with the listening channel once the server accepts connections (tests that bind
    /// port 0 read the port from it).
    public var onServerRunning: @Sendable (any Channel) async -> Void
    /// Which device each recently used token names (tests look inside or plant a stale entry).
    var tokens = TokenIdentityCache()
    /// Where large and compressed push bodies are decoded and checked (tests hold their own busy).
    var costlyWork = CostlyWork.shared

    public init(
        store: any SyncStore,
        notifier: ChangeNotifier = ChangeNotifier(),
        activity: DeviceActivity = DeviceActivity(),
        jwt: JWTSignIn? = nil,
        registry: PrometheusCollectorRegistry? = nil,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        logger: Logger = Logger(label: "tipsync-server"),
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) {
        self.store = store
        self.notifier = notifier
        self.activity = activity
        self.jwt = jwt
        self.registry = registry
        self.now = now
        self.logger = logger
        self.onServerRunning = onServerRunning
    }
}
