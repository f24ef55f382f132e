import Foundation
import GRDB
import TipSyncCore

/// A device's SQLite replica: tables for tips, parameters, events, donations and display counters,
/// plus this device's change log. Owns the schema migrations; every write is one transaction that
/// stores a change-log entry together with the records it changed.
struct ReplicaDatabase: Sendable {
    let writer: DatabasePool
    /// The sync bookkeeping kept between writes (``syncProgress()``).
    private let syncProgressCache = SyncProgressCache()

    /// Opens (creating if needed) the replica in `directory`, in WAL mode, and migrates it.
    init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // WAL + NORMAL: a crash (of the app or the OS) leaves the database as before or after each
            // transaction; only a power loss may forget the very latest commits.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        writer = try DatabasePool(
            path: directory.appendingPathComponent("replica.sqlite").path, configuration: configuration)
        try Self.migrator.migrate(writer)
        writer.add(transactionObserver: syncProgressCache, extent: .databaseLifetime)
    }

    /// The sync client's bookkeeping as the file holds it now; from memory while nothing wrote it
    /// since it was last read (``SyncProgressCache``).
    func syncProgress() throws -> SyncProgress {
        try writer.writeWithoutTransaction { db in try syncProgressCache.read(db) }
    }

    /// The schema. Migrations use SQL only and never depend on app types.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    -- This device's change log, in sequence order: what sync pushes.
                    CREATE TABLE change (seq INTEGER PRIMARY KEY NOT NULL, hlc INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL);
                    CREATE TABLE parameter (id TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL, hlc INTEGER NOT NULL, device TEXT NOT NULL);
                    -- A tip's invalidation register and latest resetEligibility.
                    CREATE TABLE tip (
                        id TEXT PRIMARY KEY NOT NULL,
                        state TEXT, reason TEXT, hlc INTEGER, device TEXT,
                        resetHLC INTEGER, resetDevice TEXT);
                    -- Per-device display counters; epochHLC -1 / epochDevice '' = before any reset.
                    CREATE TABLE display (
                        tipID TEXT NOT NULL, device TEXT NOT NULL, epochHLC INTEGER NOT NULL, epochDevice TEXT NOT NULL,
                        count INTEGER NOT NULL, duration REAL NOT NULL, lastDisplayed INTEGER NOT NULL,
                        PRIMARY KEY (tipID, device, epochHLC, epochDevice));
                    -- deleteDonations() register per event.
                    CREATE TABLE event (id TEXT PRIMARY KEY NOT NULL, deletedHLC INTEGER NOT NULL, deletedDevice TEXT NOT NULL);
                    CREATE TABLE donation (
                        eventID TEXT NOT NULL, id TEXT NOT NULL, date INTEGER NOT NULL, info TEXT,
                        hlc INTEGER NOT NULL, device TEXT NOT NULL,
                        PRIMARY KEY (eventID, id));
                    """)
        }
        return migrator
    }
}
