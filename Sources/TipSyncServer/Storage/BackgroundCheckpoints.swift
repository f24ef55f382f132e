import ServiceLifecycle

/// The server's service that checkpoints the store beside its writer every second
/// (``ChangeLogStore/checkpointInBackground(every:)``), until the service group shuts down.
struct BackgroundCheckpoints: Service {
    let store: any ChangeLogStore
    /// How often; a second keeps SQLite's log near what a second of pushes writes.
    var interval: Duration = .seconds(1)

    func run() async throws {
        try await store.checkpointInBackground(every: interval)
        try? await gracefulShutdown()  // a backend with nothing to do: wait like the other services
    }
}
