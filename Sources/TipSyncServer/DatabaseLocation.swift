/// Where the server keeps its data: `sqlite:PATH` (default `sqlite:./tipsync-data/server.sqlite`).
/// `postgres://…` is reserved for the PostgreSQL backend.
public enum DatabaseLocation: Sendable, Hashable {
    case sqlite(path: String)

    public static let defaultValue = "sqlite:./tipsync-data/server.sqlite"

    public init(_ text: String) throws {
        if text.hasPrefix("sqlite:") {
            self = .sqlite(path: String(text.dropFirst("sqlite:".count)))
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            throw StoreError("the PostgreSQL backend is not part of this build yet; use sqlite:PATH")
        } else if !text.contains("://") {
            self = .sqlite(path: text)
        } else {
            throw StoreError("unsupported database '\(text)'; use sqlite:PATH")
        }
    }

    /// Opens the store and migrates it.
    public func open() async throws -> any SyncStore {
        switch self {
        case .sqlite(let path):
            let store = try SQLiteSyncStore(path: path)
            try await store.migrate()
            return store
        }
    }
}
