import Foundation
import TipSyncCore

/// The sync status an app (or the agent's log) reads and waits for.
extension SyncClient {
    /// The status now, then every change to it, until the stream is dropped.
    public func statusUpdates() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream<SyncStatus>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = nextStatusSubscriber
        nextStatusSubscriber += 1
        statusSubscribers[id] = continuation
        continuation.yield(publishedStatus)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.dropStatusSubscriber(id) }
        }
        return stream
    }

    func dropStatusSubscriber(_ id: UInt64) {
        statusSubscribers[id] = nil
    }

    /// Returns `true` once this device has completed its first sync (a pull reached the end of the
    /// account's log, now or in an earlier launch), `false` when `timeout` passes first. The sync
    /// itself is ``run()``'s (or ``syncOnce()``'s): this only waits.
    public func waitForFirstSync(timeout: Duration) async -> Bool {
        if replica.hasSynced { return true }
        let updates = statusUpdates()
        let sleep = self.sleep
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await status in updates where status.hasSynced { return true }
                return false
            }
            group.addTask {
                do { try await sleep(timeout) } catch { return false }
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Recomputes ``status`` from the replica and what the client saw, and tells subscribers when
    /// it changed. `connected`: an exchange succeeded — the state becomes ``SyncState/connected``
    /// only once no failure is outstanding (``lastError`` is cleared when a round completes), so a
    /// round that pulls but whose push is refused never flashes `connected`; `state`: a failure's
    /// state; `error`: the latest failure (`nil`: unchanged); `nextAttemptAt`: when a retry is due
    /// (`.some(nil)`: none; `nil`: unchanged).
    func publishStatus(
        connected: Bool? = nil, state: SyncState? = nil, error: SyncClientError?? = nil, synced: Bool = false,
        nextAttemptAt: Date?? = nil
    ) {
        var next = publishedStatus
        if let error { next.lastError = error }
        if connected == true, next.lastError == nil {
            next.state = .connected
            next.nextAttemptAt = nil
        }
        if let state {
            next.state = state
            if state != .offline && state != .refused { next.nextAttemptAt = nil }
        }
        if let nextAttemptAt { next.nextAttemptAt = nextAttemptAt }  // `.some(nil)` clears it
        if synced { next.lastSyncedAt = physicalNow() }
        next.hasSynced = replica.hasSynced
        next.isHeldForFirstSync = replica.isHeldForFirstSync
        if let pending = try? replica.lastLocalSeq - replica.syncProgress.pushedSeq {
            next.pendingChanges = Int(pending)
        }
        guard next != publishedStatus else { return }
        let before = publishedStatus
        publishedStatus = next
        for subscriber in statusSubscribers.values { subscriber.yield(next) }
        configuration.onStatusChange?(before, next)
    }
}
