import Foundation
package import Logging
import TipSyncPostgresStorage
import TipSyncSQLiteStorage
package import TipSyncStorage

/// Opening the database a ``DatabaseLocation`` names: the one place that knows both backends.
extension DatabaseLocation {
    /// Opens the store, migrates it (before anything else uses it), runs `body` with it and closes it.
    /// For PostgreSQL the connection pool runs for exactly that long.
    /// - Parameter creating: whether a SQLite file that does not exist may be created. Without it,
    ///   a missing file is an error naming the path: a command run from another directory would
    ///   otherwise open a new, empty database and say "no account named …".
    /// - Parameter waiting: how long PostgreSQL may take to answer before this gives up
    ///   (``ServerConfiguration/databaseWait``), retrying with a logged backoff meanwhile.
    package func withStore<Result: Sendable>(
        logger: Logger = Logger(label: "tipsync-server"), creating: Bool = true, waiting: Duration = .seconds(60),
        _ body: (any SyncStore) async throws -> Result
    ) async throws -> Result {
        switch self {
        case .sqlite(let path):
            guard creating || exists else {
                throw StoreError(
                    "no database at \(description) (a relative path is relative to the current directory, "
                        + "\(FileManager.default.currentDirectoryPath)); pass --database or set TIPSYNC_DATABASE to the "
                        + "server's database, or create one with 'tipsync-server migrate'")
            }
            if !exists {
                try Self.prepareDirectory(of: path)
                // Readable by the owner only: it holds token hashes and every account's log. SQLite
                // gives its write-ahead log and shared-memory files the database file's mode.
                let descriptor = open(path, O_CREAT | O_WRONLY | O_EXCL, 0o600)
                if descriptor >= 0 { close(descriptor) }
            }
            let store: SQLiteSyncStore
            do {
                store = try SQLiteSyncStore(path: path)
                try await store.migrate()
            } catch {
                // SQLite says "unable to open database file" or "attempt to write a readonly database":
                // the file is named, and what to do.
                throw StoreError(
                    "cannot open the database \(description) for writing (\(error)); the server needs to write the "
                        + "file and its directory (its write-ahead log lives beside it): fix their permissions or "
                        + "choose another path with --database or TIPSYNC_DATABASE")
            }
            return try await body(store)
        case .postgres(let url):
            return try await PostgresSyncStore.withMigratedStore(url: url, waiting: waiting, logger: logger, body)
        }
    }
}
