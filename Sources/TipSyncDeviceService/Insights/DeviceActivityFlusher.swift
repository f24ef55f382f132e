package import Logging
import ServiceLifecycle
import Synchronization
import TipSyncServerBasics
package import TipSyncStorage

/// Writes ``DeviceActivity`` to the store every few seconds, and once more on shutdown.
package struct DeviceActivityFlusher: Service {
    let activity: DeviceActivity
    let store: any IdentityStore
    let interval: Duration
    let logger: Logger
    /// Told of every flush that wrote: the writes warm caches the server releases once quiet.
    var memory: MemoryRelease? = nil

    package init(
        activity: DeviceActivity, store: any IdentityStore, interval: Duration, logger: Logger,
        memory: MemoryRelease? = nil
    ) {
        self.activity = activity
        self.store = store
        self.interval = interval
        self.logger = logger
        self.memory = memory
    }

    package func run() async throws {
        await Periodic.run(every: interval) { await flush() }
        await flush()
    }

    private func flush() async {
        do {
            if try await activity.flush(to: store) > 0 { memory?.noteActivity() }
        } catch {
            logger.warning("could not record when devices were last seen", metadata: ["error": "\(error)"])
        }
    }
}
