import ServiceLifecycle
import TipSyncServerBasics

/// The server's service that checkpoints the store beside its writer every second
/// (``ChangeLogStore/checkpointInBackground(every:)``), until the service group shuts down.
package struct BackgroundCheckpoints: Service {
    package let store: any ChangeLogStore
    /// How often; a second keeps SQLite's log near what a second of pushes writes.
    package var interval: Duration = .seconds(1)

    package init(store: any ChangeLogStore, interval: Duration = .seconds(1)) {
        self.store = store
        self.interval = interval
    }

    package func run() async throws {
        try await store.checkpointInBackground(every: interval)
        try? await gracefulShutdown()  // a backend with nothing to do: wait like the other services
    }
}
