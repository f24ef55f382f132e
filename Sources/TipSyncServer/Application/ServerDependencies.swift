import Foundation
package import Logging
package import NIOCore
package import Prometheus
import TipSyncDeviceService
import TipSyncOperatorService

/// What the server runs with besides its settings: the store, the clock, shared state, and the hooks
/// tests use. ``buildApplication(configuration:dependencies:)`` takes this and a ``ServerConfiguration``.
package struct ServerDependencies: Sendable {
    /// The database (SQLite or PostgreSQL), opened and migrated.
    package var store: any SyncStore
    /// Wakes long-polls and live streams; share one between instances of a test to share wake-ups.
    package var notifier: ChangeNotifier
    /// Devices' last-seen times, flushed to the store every few seconds.
    package var activity: DeviceActivity
    /// JWT device sign-in, when ``ServerConfiguration/jwt`` names a key source.
    package var jwt: JWTSignIn?
    /// Where metrics go (`/metrics`); `nil` serves an empty page.
    package var registry: PrometheusCollectorRegistry?
    /// The server's clock, in milliseconds since 1970 (tests inject one).
    package var now: @Sendable () -> Int64
    /// The server's logger.
    package var logger: Logger
    /// Called with the listening channel once the server accepts connections (tests that bind
    /// port 0 read the port from it).
    package var onServerRunning: @Sendable (any Channel) async -> Void
    /// What `/ready` reads: told when the listener accepts and when other instances' events arrive.
    package var readiness = Readiness()
    /// Which device each recently used token names (tests look inside or plant a stale entry).
    var tokens = TokenIdentityCache()
    /// Where large and compressed push bodies are decoded and checked (tests hold their own busy).
    var costlyWork = CostlyWork.shared

    package init(
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
