import ServiceLifecycle
import TipSyncServerBasics
import TipSyncStorage

/// Every `interval`, a `: heartbeat` comment on every live stream of this instance (so proxies keep
/// idle streams open): one timer for the server, not one per stream.
package struct LiveHeartbeat: Service {
    let notifier: ChangeNotifier
    let interval: Duration

    package init(notifier: ChangeNotifier, interval: Duration) {
        self.notifier = notifier
        self.interval = interval
    }

    package func run() async throws {
        await Periodic.run(every: interval) { [notifier] in notifier.heartbeat() }
    }
}
