import Foundation

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
            _ = try PostgresURL(text)  // a malformed URL fails here, clearly
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
    package static func prepareDirectory(of path: String) throws {
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
}
