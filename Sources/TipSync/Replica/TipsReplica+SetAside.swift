import Foundation
import GRDB
import Synchronization
import TipSyncCore

/// A change the server refuses (`422 invalid_change`) must not hold up the changes behind it
/// (protocol.md §17.2): it is set aside — taken out of this device's log, its effect undone — and
/// the unsent changes after it are numbered one lower, so the outbox pushes on.
extension TipsReplica {
    /// Takes this device's change `seq` out of its log when no server can hold it (above every
    /// acknowledged or unanswered push): the unsent changes after it move down one sequence number
    /// (a donation's id follows its number), the state is rebuilt without it, and the pull cursor is
    /// forgotten, so the next pull merges every other device's changes again. Returns the change set
    /// aside, or `nil` when it may be on a server (then nothing changes).
    package func setAsideUnsentChange(seq: Int64) throws -> Change? {
        try reloadIfChangedElsewhere()
        let progress = try syncProgress
        guard seq > max(progress.acknowledgedHighSeq, progress.uncertainPush?.seq ?? 0) else { return nil }
        return try core.withLock { core -> Change? in
            let log = try database.localChanges(after: 0)
            guard let refused = log.first(where: { $0.seq == seq }) else { return nil }
            var renumbered: [Change] = []
            for var change in log where change.seq > seq {
                change.seq -= 1
                if case .donation(let event, _, let date, let info) = change.operation {
                    change.operation = .donation(event: event, id: "\(deviceID):\(change.seq)", date: date, info: info)
                }
                renumbered.append(change)
            }
            var state = ReplicaState()
            for change in log.filter({ $0.seq < seq }) + renumbered {
                _ = merge.apply(&state, change, core.donationLimits)
            }
            do {
                try database.writer.write { db in
                    try db.execute(sql: "DELETE FROM change WHERE seq >= ?", arguments: [seq])
                    for change in renumbered {
                        try db.execute(
                            sql: "INSERT INTO change (seq, hlc, kind, body) VALUES (?, ?, ?, ?)",
                            arguments: [change.seq, change.hlc.rawValue, change.kind.rawValue, change.canonicalJSON])
                    }
                    try ReplicaDatabase.rewriteAll(state, db)
                    try ReplicaDatabase.setMeta(.pullCursor, nil, db)
                }
            } catch {
                reloadAfterFailure(&core)
                throw error
            }
            core.state = state
            core.nextSeq -= 1
            notifyObservers(&core)
            return refused
        }
    }
}
