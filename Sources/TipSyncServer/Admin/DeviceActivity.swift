import Logging
import ServiceLifecycle
import Synchronization

/// When each device was last seen, kept in memory per request and written to the store in batches
/// (``DeviceActivityFlusher``), so that pulls and live streams stay reads.
public final class DeviceActivity: Sendable {
    private let pending = Mutex<[DeviceIdentity: Int64]>([:])
    private let pendingPulls = Mutex<[DeviceIdentity: Int64]>([:])

    public init() {}

    /// Records that `device` made an authenticated request at `time` (milliseconds).
    func seen(_ device: DeviceIdentity, at time: Int64) {
        pending.withLock { pending in pending[device] = max(pending[device] ?? .min, time) }
    }

    /// Records the log position `device`'s latest pull reached (its latest pull wins).
    func pulled(_ device: DeviceIdentity, through position: Int64) {
        pendingPulls.withLock { $0[device] = position }
    }

    /// The pull position recorded for `device` and not yet written, if any.
    func unwrittenPull(_ device: DeviceIdentity) -> Int64? { pendingPulls.withLock { $0[device] } }

    /// The time recorded for `device` and not yet written, if any.
    func unwritten(_ device: DeviceIdentity) -> Int64? { pending.withLock { $0[device] } }

    /// Writes what was recorded since the last flush; returns how many devices' records it wrote.
    @discardableResult
    func flush(to store: any SyncStore) async throws -> Int {
        let batch = pending.withLock { pending in
            defer { pending = [:] }
            return pending
        }
        let pulls = pendingPulls.withLock { pending in
            defer { pending = [:] }
            return pending
        }
        do {
            try await store.recordSeen(batch)
            try await store.recordPulled(pulls)
            return batch.count + pulls.count
        } catch {
            // Kept for the next flush: late, never lost (a newer pull recorded meanwhile wins).
            pending.withLock { pending in pending.merge(batch) { max($0, $1) } }
            pendingPulls.withLock { pending in pending.merge(pulls) { current, _ in current } }
            throw error
        }
    }
}

/// Writes ``DeviceActivity`` to the store every few seconds, and once more on shutdown.
struct DeviceActivityFlusher: Service {
    let activity: DeviceActivity
    let store: any SyncStore
    let interval: Duration
    let logger: Logger
    /// Told of every flush that wrote: the writes warm caches the server releases once quiet.
    var memory: MemoryRelease? = nil

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                await flush()
            }
        }
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
