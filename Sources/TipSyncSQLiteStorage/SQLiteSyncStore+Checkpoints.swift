package import GRDB
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

#if canImport(SQLite3)
    import SQLite3
#else
    import GRDBSQLite
#endif

/// The write-ahead log checkpointed beside the writer, not by it.
///
/// SQLite checkpoints by default in the connection that commits once the log passes 1,000 pages:
/// the commit copies the log into the database and syncs the file before it returns, and with group
/// commit every push waiting for that writer waits too. Issue 59's measurement found exactly this:
/// four devices' pushes stalled together for ~16 ms twice in every 15 s (each a checkpoint), which
/// alone put their p99 at 2–5× its usual figure. While a server runs, the writer only counts the log's
/// pages (a WAL hook replaces SQLite's automatic checkpoint), and a connection of its own checkpoints
/// once they pass the same 1,000 pages: beside the writer (a passive checkpoint never blocks it), as
/// often as SQLite would have.
extension SQLiteSyncStore {
    /// SQLite's own threshold for a checkpoint, in pages of log.
    package static let checkpointPages = 1000

    package func checkpointInBackground(every interval: Duration) async throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let checkpointer = try DatabaseQueue(path: pool.path, configuration: configuration)
        try await setCommitsCheckpoint(false)
        await Periodic.run(every: interval) { [logPages] in
            guard logPages.count >= Self.checkpointPages else { return }
            if let moved = try? await Self.checkpointPassively(checkpointer), moved.checkpointed == moved.log {
                logPages.reset(ifStill: moved.log)
            }
        }
        // Shutting down: commits after this (there should be none) checkpoint as SQLite does alone —
        // also when this task was cancelled, which GRDB's writes would refuse.
        try? await Task { try await setCommitsCheckpoint(true) }.value
    }

    /// Whether a commit checkpoints the log once it passes SQLite's 1,000 pages (its default), or
    /// only counts the log's pages in ``logPages``.
    package func setCommitsCheckpoint(_ checkpoints: Bool) async throws {
        try await pool.writeWithoutTransaction { [logPages] db in
            if checkpoints {
                sqlite3_wal_autocheckpoint(db.sqliteConnection, Int32(Self.checkpointPages))
            } else {
                // The store owns `logPages` for as long as its writer lives.
                let context = Unmanaged.passUnretained(logPages).toOpaque()
                sqlite3_wal_hook(
                    db.sqliteConnection,
                    { context, _, _, pages in
                        if let context {
                            Unmanaged<LogPages>.fromOpaque(context).takeUnretainedValue().count = Int(pages)
                        }
                        return SQLITE_OK
                    }, context)
            }
        }
    }

    /// The log's pages in the database, as far as no reader still needs them; returns the log's
    /// length in pages and how many of them are now in the database.
    @discardableResult
    package static func checkpointPassively(_ connection: DatabaseQueue) async throws -> (log: Int, checkpointed: Int) {
        try await connection.writeWithoutTransaction { db in
            let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
            return (row?[1] ?? 0, row?[2] ?? 0)
        }
    }
}

/// The pages of the write-ahead log after the writer's last commit (the WAL hook's count).
package final class LogPages: Sendable {
    private let pages = Atomic<Int>(0)

    package var count: Int {
        get { pages.load(ordering: .relaxed) }
        set { pages.store(newValue, ordering: .relaxed) }
    }

    /// Back to 0 after a complete checkpoint, unless a commit has counted anew meanwhile.
    package func reset(ifStill log: Int) {
        _ = pages.compareExchange(expected: log, desired: 0, ordering: .relaxed)
    }
}
