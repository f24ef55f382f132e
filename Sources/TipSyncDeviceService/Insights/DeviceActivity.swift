import Logging
import ServiceLifecycle
import Synchronization
import TipSyncCore
package import TipSyncServerBasics
package import TipSyncStorage

/// When each device was last seen, kept in memory per request and written to the store in batches
/// (``DeviceActivityFlusher``), so that pulls and live streams stay reads.
package final class DeviceActivity: Sendable {
    private let pending = Mutex<[DeviceIdentity: Int64]>([:])
    private let pendingPulls = Mutex<[DeviceIdentity: Int64]>([:])
    private let pendingContexts = Mutex<[DeviceIdentity: String]>([:])

    package init() {}

    /// Records that `device` made an authenticated request at `time` (milliseconds).
    func seen(_ device: DeviceIdentity, at time: Int64) {
        pending.withLock { pending in pending[device] = max(pending[device] ?? .min, time) }
    }

    /// Records what `device` reported of itself (header `TipSync-Context`), as the header's
    /// canonical text: its latest report wins.
    func reported(_ device: DeviceIdentity, _ context: DeviceContext) {
        guard let text = context.headerValue else { return }
        pendingContexts.withLock { $0[device] = text }
    }

    /// Records the log position `device`'s latest pull reached (its latest pull wins).
    package func pulled(_ device: DeviceIdentity, through position: Int64) {
        pendingPulls.withLock { $0[device] = position }
    }

    /// The pull position recorded for `device` and not yet written, if any.
    package func unwrittenPull(_ device: DeviceIdentity) -> Int64? { pendingPulls.withLock { $0[device] } }

    /// What is recorded for `account`'s devices and not yet written, by device name: read it *before*
    /// reading the store, so that a flush in between leaves each value in one or the other.
    package func unwritten(account: Int64) -> (
        seen: [String: Int64], pulled: [String: Int64], contexts: [String: String]
    ) {
        func forAccount<Value>(_ records: [DeviceIdentity: Value]) -> [String: Value] {
            Dictionary(records.filter { $0.key.accountID == account }.map { ($0.key.device, $0.value) }) { $1 }
        }
        return (
            pending.withLock { forAccount($0) }, pendingPulls.withLock { forAccount($0) },
            pendingContexts.withLock { forAccount($0) }
        )
    }

    /// The time recorded for `device` and not yet written, if any.
    func unwritten(_ device: DeviceIdentity) -> Int64? { pending.withLock { $0[device] } }

    /// Writes what was recorded since the last flush; returns how many devices' records it wrote.
    /// Records leave memory only once written (and only if no newer one came meanwhile), so a reader
    /// always finds each device's latest value in memory or in the store, never in neither.
    @discardableResult
    package func flush(to store: any IdentityStore) async throws -> Int {
        let batch = pending.withLock { $0 }
        let pulls = pendingPulls.withLock { $0 }
        let contexts = pendingContexts.withLock { $0 }
        guard !batch.isEmpty || !pulls.isEmpty || !contexts.isEmpty else { return 0 }
        try await store.recordSeen(batch)
        try await store.recordPulled(pulls)
        try await store.recordContexts(contexts)
        pendingContexts.withLock { pending in
            for (device, text) in contexts where pending[device] == text { pending.removeValue(forKey: device) }
        }
        pending.withLock { pending in
            for (device, time) in batch where pending[device] == time { pending.removeValue(forKey: device) }
        }
        pendingPulls.withLock { pending in
            for (device, position) in pulls where pending[device] == position { pending.removeValue(forKey: device) }
        }
        return batch.count + pulls.count + contexts.count
    }
}
