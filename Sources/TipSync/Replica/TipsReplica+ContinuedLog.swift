import Foundation
import GRDB
import Synchronization
import TipSyncCore

/// A device name the server already knows, on a replica that does not hold that device's log (an
/// app reinstalled with the same device name, a deleted replica file): protocol.md §7, "A device
/// whose storage was lost". Without this, the replica's changes would reuse sequence numbers the
/// server holds and be dropped as duplicates.
extension TipsReplica {
    /// Numbers this replica's changes after `highestSeq` (the server's log of this device; a
    /// donation's id moves with its number), counts `highestSeq` as acknowledged, and from then on
    /// takes the device's own changes up to it, when pulls bring them, as its log. Only for a replica
    /// that has never reached the server (its changes are on no other device).
    package func continueDeviceLog(after highestSeq: Int64) throws {
        guard highestSeq > 0 else { return }
        try core.withLock { core in
            do {
                try database.writer.write { db in
                    _ = try adoptWritesFromElsewhere(&core, db)
                    let log = try String.fetchAll(db, sql: "SELECT body FROM change ORDER BY seq")
                        .map { try JSONCoding.decode(Change.self, from: $0.utf8) }
                    let renumbered = log.map { change -> Change in
                        var change = change
                        change.seq += highestSeq
                        if case .donation(let event, _, let date, let info) = change.operation {
                            change.operation = .donation(
                                event: event, id: "\(deviceID):\(change.seq)", date: date, info: info)
                        }
                        return change
                    }
                    try db.execute(sql: "DELETE FROM change")
                    var state = ReplicaState()
                    for change in renumbered {
                        try ReplicaDatabase.appendToLog(change, db)
                        _ = merge.apply(&state, change, core.donationLimits)
                    }
                    try ReplicaDatabase.rewriteAll(state, db)
                    try ReplicaDatabase.setMeta(.ownLogAdoptedThrough, String(highestSeq), db)
                    var progress = try ReplicaDatabase.syncProgress(db)
                    let old = progress
                    progress.setPushed(through: highestSeq)
                    try ReplicaDatabase.save(progress, over: old, db)
                    core.state = state
                    core.nextSeq = (renumbered.last?.seq ?? highestSeq) + 1
                }
            } catch {
                reloadAfterFailure(&core)
                throw error
            }
            notifyObservers(&core)
        }
    }
}
