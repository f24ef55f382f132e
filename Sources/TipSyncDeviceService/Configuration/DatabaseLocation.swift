import Foundation
package import Logging
import PostgresNIO
import TipSyncServerBasics
package import TipSyncStorage

/// Where the server keeps its data: `sqlite:PATH` (default `sqlite:./tipsync-data/server.sqlite`)
/// or `postgres://user:password@host:5432/database[?sslmode=disable|prefer|require]`.
package enum DatabaseLocation: Sendable, Hashable {
    case sqlite(path: String)
    case postgres(url: String)

    package static let defaultValue = "sqlite:./tipsync-data/server.sqlite"

    package init(_ text: String) throws {
        // An empty setting (`TIPSYNC_DATABASE=`) used to read as the current directory.
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty, text != "sqlite:" else {
            throw StoreError(
                "empty; give sqlite:PATH (e.g. \(Self.defaultValue)) or postgres://user:password@host:5432/db")
        }
        if text.hasPrefix("sqlite:") {
            self = .sqlite(path: String(text.dropFirst("sqlite:".count)))
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            _ = try PostgresSyncStore.makeClient(url: text)  // a malformed URL fails here, clearly
            self = .postgres(url: text)
        } else if !text.contains("://") {
            self = .sqlite(path: text)
        } else {
            throw StoreError("unsupported database '\(text)'; use sqlite:PATH or postgres://user:password@host:5432/db")
        }
    }

    /// What an operator needs to know which database this is: the SQLite file's absolute path (a
    /// relative one is relative to the current directory), or the PostgreSQL URL without its password.
    package var description: String {
        switch self {
        case .sqlite(let path):
            "sqlite:" + URL(fileURLWithPath: path).standardizedFileURL.path
        case .postgres(let url):
            url.replacing(/:\/\/([^:@\/]*):[^@\/]*@/, with: { "://\($0.1):***@" })
        }
    }

    /// Whether the database exists already (always `true` for PostgreSQL: the server creates no database there).
    package var exists: Bool {
        switch self {
        case .sqlite(let path): FileManager.default.fileExists(atPath: path)
        case .postgres: true
        }
    }

    /// Creates the directory a new SQLite database goes in, and checks it can be written; each
    /// failure names the directory and what to do.
    static func prepareDirectory(of path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().standardizedFileURL.path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            let posix = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code
            let reason = posix.map { String(cString: strerror(Int32($0))) } ?? "it cannot be created"
            throw StoreError(
                "cannot create the directory '\(directory)' for the database (\(reason)); "
                    + "choose a writable path with --database or TIPSYNC_DATABASE")
        }
        guard access(directory, W_OK) == 0 else {
            throw StoreError(
                "cannot write in '\(directory)' (\(String(cString: strerror(errno)))): the database and its "
                    + "write-ahead log are created there; fix its permissions or choose another path with "
                    + "--database or TIPSYNC_DATABASE")
        }
    }

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
            let client = try PostgresSyncStore.makeClient(url: url)
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                let components = URLComponents(string: url)
                try await PostgresReachability.waitUntilReachable(
                    client, host: components?.host ?? "localhost", port: components?.port ?? 5432, within: waiting,
                    logger: logger)
                let store = PostgresSyncStore(client: client, logger: logger)
                try await store.migrate()
                return try await body(store)
            }
        }
    }
}
