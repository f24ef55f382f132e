import Logging
import ServiceLifecycle
import Synchronization

/// Writes ``DeviceActivity`` to the store every few seconds, and once more on shutdown.
struct DeviceActivityFlusher: Service {
    let activity: DeviceActivity
    let store: any IdentityStore
    let interval: Duration
    let logger: Logger
    /// Told of every flush that wrote: the writes warm caches the server releases once quiet.
    var memory: MemoryRelease? = nil

    func run() async throws {
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
