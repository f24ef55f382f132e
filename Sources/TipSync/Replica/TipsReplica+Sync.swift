import Foundation
import TipSyncCore

/// What the sync client needs from a replica: its outbox, cursor and clock correction, all kept in
/// the replica's database so they survive restarts.
extension TipsReplica {
    /// The highest local sequence number the server has acknowledged.
    public var pushedSeq: Int64 {
        get throws { Int64(try database.meta(.pushedSeq) ?? "0") ?? 0 }
    }

    /// Sets the acknowledged mark: raised by acknowledgements, lowered when the server reports it lost
    /// changes (a restored backup), which are then pushed again with their stamps.
    public func setPushedSeq(_ seq: Int64) throws {
        try database.writer.write { db in
            try ReplicaDatabase.setMeta(.pushedSeq, String(seq), db)
            let high = try ReplicaDatabase.meta(.acknowledgedHighSeq, db).flatMap { Int64($0) } ?? 0
            if seq > high { try ReplicaDatabase.setMeta(.acknowledgedHighSeq, String(seq), db) }
        }
    }

    /// The highest sequence number the server ever acknowledged (``setPushedSeq(_:)`` never lowers it).
    public var acknowledgedHighSeq: Int64 {
        get throws { max(Int64(try database.meta(.acknowledgedHighSeq) ?? "0") ?? 0, try pushedSeq) }
    }

    /// The server's cursor generation from its latest answer (`nil` before any).
    public var serverGeneration: String? {
        get throws { try database.meta(.serverGeneration) }
    }

    public func setServerGeneration(_ generation: String) throws {
        try database.setMeta(.serverGeneration, generation)
    }

    /// A push that got no answer: the server may have stored changes up to `seq`.
    public var uncertainPush: (seq: Int64, generation: String?)? {
        get throws {
            guard let seq = try database.meta(.uncertainSeq).flatMap({ Int64($0) }) else { return nil }
            return (seq, try database.meta(.uncertainGeneration))
        }
    }

    /// Remembers a push through `seq` that got no answer, with the server generation known now.
    public func recordUncertainPush(through seq: Int64) throws {
        try database.writer.write { db in
            let known = try ReplicaDatabase.meta(.uncertainSeq, db).flatMap { Int64($0) } ?? 0
            try ReplicaDatabase.setMeta(.uncertainSeq, String(max(known, seq)), db)
            try ReplicaDatabase.setMeta(
                .uncertainGeneration, try ReplicaDatabase.meta(.serverGeneration, db), db)
        }
    }

    /// The server's answer settled what the unanswered push did.
    public func clearUncertainPush() throws {
        try database.writer.write { db in
            try ReplicaDatabase.setMeta(.uncertainSeq, nil, db)
            try ReplicaDatabase.setMeta(.uncertainGeneration, nil, db)
        }
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
    /// the new stamps. Nothing unsent is lost. Changes at or below ``acknowledgedHighSeq`` or
    /// `keepingThrough` keep their stamps: another device may hold them.
    ///
    /// Payload times were read from the same wrong clock as the stamps, so they move with them: a
    /// re-stamped donation's `date` and display's `lastDisplayed` move back by as much as the
    /// change's stamp moved back (never forward, never below 0) — otherwise a device that was a day
    /// fast leaves never-shown tips throttled and its donations "recent" for a day on every device
    /// (`protocol.md` §11).
    public func restampUnacknowledgedChanges(keepingThrough keep: Int64 = 0) throws {
        try reloadIfChangedElsewhere()
        let acknowledged = max(try acknowledgedHighSeq, keep)
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
