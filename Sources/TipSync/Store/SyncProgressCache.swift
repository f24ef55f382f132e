import GRDB
import Synchronization

/// The sync client's bookkeeping (``SyncProgress``) as last read, kept while nothing has written it
/// since: a reconnect reads it about eight times (its outbox, its round's checks, each status it
/// publishes), and each read was a read transaction of its own (BENCHMARKS.md, "18,000
/// reference clients back within 15 s").
///
/// Never stale. It observes the writer connection: any change to the `meta` table made through
/// it — ``TipsReplica/updateSyncProgress(_:)``, a page merged with its cursor, a raw write — forgets
/// it. Another connection's commit (another process sharing the file, a tool) changes the writer
/// connection's `PRAGMA data_version`, which every read compares with the one the kept value was
/// read at. Reads and writes both run on the writer connection, so none falls between a write and
/// the forgetting.
final class SyncProgressCache: TransactionObserver, Sendable {
    private struct Kept {
        var progress: SyncProgress
        var dataVersion: Int64
    }
    private let kept = Mutex<Kept?>(nil)

    /// The bookkeeping, from memory when it is still what the file holds. On the writer connection.
    func read(_ db: Database) throws -> SyncProgress {
        let version = try ReplicaDatabase.dataVersion(db)
        if let kept = kept.withLock({ $0 }), kept.dataVersion == version { return kept.progress }
        let progress = try ReplicaDatabase.syncProgress(db)
        kept.withLock { $0 = Kept(progress: progress, dataVersion: version) }
        return progress
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        eventKind.tableName == "meta"
    }

    func databaseDidChange(with event: DatabaseEvent) {
        kept.withLock { $0 = nil }
    }

    func databaseDidCommit(_ db: Database) {}

    func databaseDidRollback(_ db: Database) {
        kept.withLock { $0 = nil }
    }
}
