import ServiceLifecycle

/// Every `interval`, a `: heartbeat` comment on every live stream of this instance (so proxies keep
/// idle streams open): one timer for the server, not one per stream.
struct LiveHeartbeat: Service {
    let notifier: ChangeNotifier
    let interval: Duration

    func run() async throws {
        await Periodic.run(every: interval) { [notifier] in notifier.heartbeat() }
    }
}
