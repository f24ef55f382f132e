import Foundation
import TipSyncCore

/// What the sync client needs from a replica: its outbox, cursor and clock correction, all kept in
/// the replica's database so they survive restarts.
extension TipsReplica {
    /// The highest local sequence number the server has acknowledged.
    public var pushedSeq: Int64 {
        get throws { Int64(try database.meta(.pushedSeq) ?? "0") ?? 0 }
    }

    public func setPushedSeq(_ seq: Int64) throws {
        try database.setMeta(.pushedSeq, String(seq))
    }

    /// The server-minted cursor to pull after (`nil`: from the beginning).
    public var pullCursor: String? {
        get throws { try database.meta(.pullCursor) }
    }

    public func setPullCursor(_ cursor: String?) throws {
        try database.setMeta(.pullCursor, cursor)
    }

    /// Milliseconds added to the device clock to match the server's.
    public var clockOffset: Int64 { clockOffsetMilliseconds.load(ordering: .relaxed) }

    public func setClockOffset(_ milliseconds: Int64) throws {
        try database.setMeta(.clockOffset, String(milliseconds))
        clockOffsetMilliseconds.store(milliseconds, ordering: .relaxed)
    }

    /// Local changes not yet acknowledged by the server, oldest first.
    public func outbox(limit: Int) throws -> [Change] {
        try localChanges(after: try pushedSeq, limit: limit)
    }

    /// Yields after every local change is committed (what triggers a push), until dropped.
    public func localChangeNotifications() -> AsyncStream<Void> {
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
    /// the new stamps. Nothing unsent is lost.
    public func restampUnacknowledgedChanges() throws {
        try reloadIfChangedElsewhere()
        let acknowledged = try pushedSeq
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
                if case .display(let tip, let epoch, let count, let duration, let last) = change.operation,
                    let epoch, let new = renamed[epoch]
                {
                    change.operation = .display(
                        tip: tip, epoch: new, count: count, duration: duration, lastDisplayed: last)
                }
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
}
