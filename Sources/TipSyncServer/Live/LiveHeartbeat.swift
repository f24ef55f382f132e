import ServiceLifecycle

/// Every `interval`, a `: heartbeat` comment on every live stream of this instance (so proxies keep
/// idle streams open): one timer for the server, not one per stream.
struct LiveHeartbeat: Service {
    let notifier: ChangeNotifier
    let interval: Duration

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                notifier.heartbeat()
            }
        }
    }
}
