import Foundation
import GRDB
import Synchronization
import TipSyncCore

/// ``TipsReplica``'s sync face (``SyncedReplica``): its outbox, its bookkeeping (``SyncProgress``) and the
/// clock correction, all kept in the replica's database so they survive restarts.
extension TipsReplica {
    /// The sync client's bookkeeping as the database holds it now.
    package var syncProgress: SyncProgress {
        get throws { try database.syncProgress() }
    }

    /// Changes the sync client's bookkeeping in one transaction (what one server answer settles),
    /// and applies a changed clock correction to this replica's clock.
    @discardableResult
    package func updateSyncProgress<Result>(_ update: (inout SyncProgress) throws -> Result) throws -> Result {
        let (result, offset, firstSync) = try database.writer.write { db in
            let old = try ReplicaDatabase.syncProgress(db)
            var progress = old
            let result = try update(&progress)
            try ReplicaDatabase.save(progress, over: old, db)
            return (result, progress.clockOffset, progress.firstSyncHold)
        }
        clockOffsetMilliseconds.store(offset, ordering: .relaxed)
        core.withLock { core in
            guard core.firstSync != firstSync else { return }
            core.firstSync = firstSync
            notifyObservers(&core)
        }
        return result
    }

    /// Whether tips are held for the first sync now (protocol.md §17.1): this replica syncs, has
    /// never completed a pull, and its sync client's bounded wait has not passed.
    public var isHeldForFirstSync: Bool {
        core.withLock { $0.firstSync }.holds(atMilliseconds: nowMilliseconds)
    }

    /// Whether a pull of this replica has ever reached the end of the account's log.
    public var hasSynced: Bool { core.withLock { $0.firstSync.hasSynced } }

    /// Starts the first-sync hold (what a sync client does as it starts): unless the replica has
    /// synced, tips that would be available stay pending for at most `seconds` from now, or until
    /// the first pull completes. Returns whether tips are held.
    @discardableResult
    package func holdForFirstSync(seconds: Double) throws -> Bool {
        let wait = seconds.isFinite ? min(max(0, seconds), 86_400) : 0
        let until = nowMilliseconds.addingReportingOverflow(Int64((wait * 1000).rounded())).partialValue
        return try updateSyncProgress { progress -> Bool in
            guard !progress.hasSynced, wait > 0 else {
                progress.firstSyncHoldUntil = nil
                return false
            }
            progress.firstSyncHoldUntil = until
            return true
        }
    }

    /// Milliseconds added to the device clock to match the server's (``SyncProgress/clockOffset``).
    package var clockOffset: Int64 { clockOffsetMilliseconds.load(ordering: .relaxed) }

    /// Local changes not yet acknowledged by the server, oldest first: at most `limit`, and no more
    /// than `bytes` of their canonical JSON texts with a comma between each (at least one).
    package func outbox(limit: Int, bytes: Int) throws -> [Change] {
        try database.localChanges(after: try syncProgress.pushedSeq, limit: limit, bytes: bytes)
    }

    /// Yields after every local change is committed (what triggers a push), until dropped.
    package func localChangeNotifications() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UInt64.random(in: .min ... .max)
        localChangeSubscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.localChangeSubscribers.withLock { _ = $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// After the server rejected far-future stamps: gives every unacknowledged local change a new
    /// stamp from the corrected clock (same sequence numbers, same meaning), then rebuilds the state
    /// from the change log and forgets the pull cursor, so the next pull re-merges everything under
    /// the new stamps. Nothing unsent is lost. Changes at or below ``acknowledgedHighSeq`` or
    /// `keepingThrough` keep their stamps: another device may hold them.
    ///
    /// Payload times were read from the same wrong clock as the stamps, so they move with them: a
    /// re-stamped donation's `date` and display's `lastDisplayed` move back by as much as the
    /// change's stamp moved back (never forward, never below 0) — otherwise a device that was a day
    /// fast leaves never-shown tips throttled and its donations "recent" for a day on every device
    /// (`protocol.md` §11).
    package func restampUnacknowledgedChanges(keepingThrough keep: Int64 = 0) throws {
        try reloadIfChangedElsewhere()
        let acknowledged = max(try syncProgress.acknowledgedHighSeq, keep)
        try core.withLock { core in
            let log = try database.localChanges(after: 0)
            let kept = log.filter { $0.seq <= acknowledged }
            // The clock restarts from what the server accepted or sent, not from the bad stamps.
            var clock = HybridLogicalClock(last: kept.map(\.hlc).max() ?? .zero)
            if let observed = try database.meta(.observedHLC).flatMap({ Int64($0) }) {
                clock.observe(HLC(rawValue: observed), physicalMilliseconds: 0)
            }
            var renamed: [Stamp: Stamp] = [:]
            var restamped: [Change] = []
            for var change in log where change.seq > acknowledged {
                let old = change.stamp
                change.hlc = clock.tick(physicalMilliseconds: UInt64(max(0, nowMilliseconds)))
                renamed[old] = change.stamp
                change.operation = Self.restamped(
                    change.operation, by: Int64(change.hlc.milliseconds) - Int64(old.hlc.milliseconds),
                    epochs: renamed)
                restamped.append(change)
            }
            var state = ReplicaState()
            for change in kept + restamped { _ = merge.apply(&state, change, core.donationLimits) }
            try database.replaceLog(restamped, state: state)
            core.state = state
            core.hlc = clock
            notifyObservers(&core)
        }
    }

    /// A re-stamped change's payload: payload times moved by `shift` milliseconds when that is
    /// backwards (clamped at 0), a display's epoch renamed to its re-stamped reset.
    static func restamped(_ operation: Change.Operation, by shift: Int64, epochs: [Stamp: Stamp]) -> Change.Operation {
        let back = min(0, shift)
        func moved(_ time: Int64) -> Int64 { max(0, time.addingReportingOverflow(back).partialValue) }
        switch operation {
        case .display(let tip, let epoch, let count, let duration, let last):
            return .display(
                tip: tip, epoch: epoch.map { epochs[$0] ?? $0 }, count: count, duration: duration,
                lastDisplayed: moved(last))
        case .donation(let event, let id, let date, let info):
            return .donation(event: event, id: id, date: moved(date), info: info)
        default:
            return operation
        }
    }
}
