package import Foundation
import GRDB
import TipSyncCore

/// The catalog the sync server delivers (`protocol.md` §16), for replicas that follow it.
extension TipsReplica {
    /// The version (`ETag`) of the server catalog this replica applied last, if any.
    package var serverCatalogTag: String? {
        get throws { try database.meta(.serverCatalogTag) }
    }

    /// The server catalog applied last, as received: what a replica that follows the server's
    /// catalog loads when it starts without a network.
    public var serverCatalog: Catalog? {
        get throws {
            guard let text = try database.meta(.serverCatalog) else { return nil }
            return try Catalog(validating: Array(text.utf8))
        }
    }

    /// Validates a catalog received from the server and applies it: it replaces the tips, groups,
    /// parameters, events and display frequency loaded before (statuses are evaluated with it at once,
    /// and observers see the transitions it causes), and is kept with its version for the next start.
    /// - Throws: ``Catalog/ValidationError`` naming the field; then nothing changes.
    @discardableResult
    package func applyServerCatalog(_ text: Data, tag: String) throws -> Catalog {
        let catalog = try Catalog(validating: text)
        try database.writer.write { db in
            try ReplicaDatabase.setMeta(.serverCatalog, String(decoding: text, as: UTF8.self), db)
            try ReplicaDatabase.setMeta(.serverCatalogTag, tag, db)
        }
        try load(catalog: catalog, replacing: true, fromServer: true)
        return catalog
    }

    /// Loads the server catalog applied last (kept in the store), for a replica that follows the
    /// server's catalog and starts before its first pull — or without a network. Returns whether
    /// there was one.
    @discardableResult
    package func loadStoredServerCatalog() throws -> Bool {
        guard let catalog = try serverCatalog else { return false }
        try load(catalog: catalog, replacing: true, fromServer: true)
        return true
    }
}
