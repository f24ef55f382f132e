import Logging
import PostgresNIO

/// Where the server keeps its data: `sqlite:PATH` (default `sqlite:./tipsync-data/server.sqlite`)
/// or `postgres://user:password@host:5432/database[?sslmode=disable|prefer|require]`.
public enum DatabaseLocation: Sendable, Hashable {
    case sqlite(path: String)
    case postgres(url: String)

    public static let defaultValue = "sqlite:./tipsync-data/server.sqlite"

    public init(_ text: String) throws {
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

    /// Opens the store, migrates it (before anything else uses it), runs `body` with it and closes it.
    /// For PostgreSQL the connection pool runs for exactly that long.
    public func withStore<Result: Sendable>(
        logger: Logger = Logger(label: "tipsync-server"), _ body: (any SyncStore) async throws -> Result
    ) async throws -> Result {
        switch self {
        case .sqlite(let path):
            let store = try SQLiteSyncStore(path: path)
            try await store.migrate()
            return try await body(store)
        case .postgres(let url):
            let client = try PostgresSyncStore.makeClient(url: url)
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                let store = PostgresSyncStore(client: client, logger: logger)
                try await store.migrate()
                return try await body(store)
            }
        }
    }
}
