import Foundation
import GRDB
import Synchronization
import TipSyncCore

/// Several processes on one store: a CLI invocation writing while a daemon runs. SQLite serializes
/// their transactions; each replica notices the others' commits through `PRAGMA data_version` and
/// reloads its in-memory state before it stamps anything or answers from stale memory.
extension TipsReplica {
    /// Inside a write transaction (SQLite's write lock held): if another connection committed since
    /// memory last matched the disk, reloads memory from the disk. Returns whether it did.
    @discardableResult
    func adoptWritesFromElsewhere(_ core: inout Core, _ db: Database) throws -> Bool {
        let version = try ReplicaDatabase.dataVersion(db)
        guard version != core.dataVersion else { return false }
        let snapshot = try ReplicaDatabase.load(db)
        core.state = snapshot.state
        core.nextSeq = max(core.nextSeq, snapshot.nextSeq)
        core.hlc.observe(snapshot.latestHLC, physicalMilliseconds: 0)
        core.dataVersion = version
        if let offset = try ReplicaDatabase.meta(.clockOffset, db).flatMap({ Int64($0) }) {
            clockOffsetMilliseconds.store(offset, ordering: .relaxed)
        }
        core.firstSync = try ReplicaDatabase.syncProgress(db).firstSyncHold
        return true
    }

    /// After a failed transaction: memory is reloaded from what the disk holds.
    func reloadAfterFailure(_ core: inout Core) {
        core.dataVersion = -1
        _ = try? database.writer.write { db in try adoptWritesFromElsewhere(&core, db) }
    }

    /// Picks up what other processes sharing this store committed (their local changes, merges
    /// from their syncs): reloads memory, re-evaluates observers and, when another process added
    /// local changes, wakes ``localChangeNotifications()`` so a running sync pushes them.
    /// Cheap when nothing changed (one `PRAGMA`). Returns whether anything was reloaded.
    @discardableResult
    public func reloadIfChangedElsewhere() throws -> Bool {
        let (reloaded, newLocalChanges) = try core.withLock { core -> (Bool, Bool) in
            let seqBefore = core.nextSeq
            let reloaded = try database.writer.writeWithoutTransaction { db in
                guard try ReplicaDatabase.dataVersion(db) != core.dataVersion else { return false }
                try db.inTransaction(.deferred) {
                    try adoptWritesFromElsewhere(&core, db)
                    return .commit
                }
                return true
            }
            if reloaded { notifyObservers(&core) }
            return (reloaded, core.nextSeq != seqBefore)
        }
        if newLocalChanges {
            for subscriber in localChangeSubscribers.withLock({ Array($0.values) }) { subscriber.yield() }
        }
        return reloaded
    }
}
