import TipSyncCore

/// The server's storage, by concern: each account's change log (``ChangeLogStore``), identities and
/// credentials (``IdentityStore``), and what the console reads (``InsightStore``). SQLite
/// (``SQLiteSyncStore``) and PostgreSQL (``PostgresSyncStore``) implement it and only do I/O; both pass
/// one contract suite (`Tests/TipSyncServerTests/StorageContractTests.swift`).
package protocol SyncStore: ChangeLogStore, IdentityStore, InsightStore {
    /// Creates the schema or upgrades it; run before serving.
    func migrate() async throws
    /// The schema's version as `tipsync-server migrate` reports it (the backend's own numbering).
    func schemaVersion() async throws -> String
    /// Frees memory that refills on demand (page caches, idle connections): called when the server
    /// has gone quiet (``MemoryRelease``). Does nothing by default.
    func releaseMemory() async
}

extension SyncStore {
    package func releaseMemory() async {}
}
