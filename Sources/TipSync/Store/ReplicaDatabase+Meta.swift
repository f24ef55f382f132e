import Foundation
import GRDB

/// Small key/value facts about the replica: its device id, the datastore reset, sync bookkeeping.
extension ReplicaDatabase {
    enum MetaKey: String {
        case deviceID
        case datastoreResetHLC
        case datastoreResetDevice
        /// The latest HLC observed from other devices, so stamps after a restart still exceed it.
        case observedHLC
    }

    static func meta(_ key: MetaKey, _ db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key.rawValue])
    }

    static func setMeta(_ key: MetaKey, _ value: String?, _ db: Database) throws {
        if let value {
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [key.rawValue, value])
        } else {
            try db.execute(sql: "DELETE FROM meta WHERE key = ?", arguments: [key.rawValue])
        }
    }

    /// The device id, created (a random UUID unless `preferred` is given) on first open.
    func deviceID(preferred: String?) throws -> String {
        try writer.write { db in
            if let existing = try Self.meta(.deviceID, db) { return existing }
            let id = preferred ?? UUID().uuidString.lowercased()
            try Self.setMeta(.deviceID, id, db)
            return id
        }
    }
}
