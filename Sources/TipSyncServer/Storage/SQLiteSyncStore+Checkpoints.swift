import GRDB

/// The write-ahead log checkpointed beside the writer, not by it.
///
/// SQLite checkpoints by default in the connection that commits once the log passes 1,000 pages:
/// the commit copies the log into the database and syncs the file before it returns, and with group
/// commit every push waiting for that writer waits too. Issue 59's measurement found exactly this:
/// four devices' pushes stalled together for ~16 ms twice in every 15 s (each a checkpoint), which
/// alone put their p99 at 2–5× its usual figure. A checkpoint on a connection of its own runs beside
/// the writer (SQLite's passive checkpoint never blocks it).
extension SQLiteSyncStore {
    public func checkpointInBackground(every interval: Duration) async throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let checkpointer = try DatabaseQueue(path: pool.path, configuration: configuration)
        try await setCommitsCheckpoint(false)
        await Periodic.run(every: interval) {
            _ = try? await Self.checkpointPassively(checkpointer)
        }
        // Shutting down: commits after this (there should be none) checkpoint as SQLite does alone —
        // also when this task was cancelled, which GRDB's writes would refuse.
        try? await Task { try await setCommitsCheckpoint(true) }.value
    }

    /// Whether a commit checkpoints the log once it passes SQLite's 1,000 pages (its default).
    func setCommitsCheckpoint(_ checkpoints: Bool) async throws {
        try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(checkpoints ? 1000 : 0)")
        }
    }

    /// The log's pages in the database, as far as no reader still needs them; returns the log's
    /// length in pages and how many of them are now in the database.
    @discardableResult
    static func checkpointPassively(_ connection: DatabaseQueue) async throws -> (log: Int, checkpointed: Int) {
        try await connection.writeWithoutTransaction { db in
            let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
            return (row?[1] ?? 0, row?[2] ?? 0)
        }
    }
}
