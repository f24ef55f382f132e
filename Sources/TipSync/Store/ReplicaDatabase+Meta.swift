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
        /// Sync: the highest local sequence number the server has acknowledged.
        case pushedSeq
        /// Sync: the highest local sequence number the server ever acknowledged. Never lowered (unlike
        /// `pushedSeq`, which drops when a restored server lost changes): nothing at or below it is
        /// ever re-stamped, since other devices may hold it.
        case acknowledgedHighSeq
        /// Sync: the highest sequence number sent in a push that got no answer, and the server's cursor
        /// generation known when it was sent (the server may have stored that push).
        case uncertainSeq
        case uncertainGeneration
        /// Sync: the server's cursor generation, from its latest answer.
        case serverGeneration
        /// Sync: the server-minted cursor to pull after.
        case pullCursor
        /// Sync: milliseconds to add to the device clock (the server's clock minus ours).
        case clockOffset
        /// Sync: `1` once a pull reached the end of the account's log (``SyncProgress/hasSynced``).
        case hasSynced
        /// Sync: until when tips are held for the first sync (``SyncProgress/firstSyncHoldUntil``).
        case firstSyncHoldUntil
        /// The server catalog this replica applied (protocol.md §16): its text, kept for offline
        /// starts, and its version (`ETag`).
        case serverCatalog
        case serverCatalogTag
        /// The highest `seq` of this device's log the server held when this replica first reached it
        /// with an empty history (``TipsReplica/continueDeviceLog(after:)``): the device's own changes
        /// up to it, when a pull brings them, are this replica's log again.
        case ownLogAdoptedThrough
        /// The account's name as the server knows it (`GET /v1/account`): what rollout buckets hash
        /// (protocol.md §13.8), kept so an offline start lands in the same buckets.
        case account
    }

    static func meta(_ key: MetaKey, _ db: Database) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM meta WHERE key = ?"), arguments: [key.rawValue])
    }

    /// The values of `keys` that are set, read in one statement.
    static func meta(_ keys: [MetaKey], _ db: Database) throws -> [MetaKey: String] {
        let statement = try db.cachedStatement(
            sql: "SELECT key, value FROM meta WHERE key IN (\(databaseQuestionMarks(count: keys.count)))")
        var values: [MetaKey: String] = [:]
        let rows = try Row.fetchCursor(statement, arguments: StatementArguments(keys.map(\.rawValue)))
        while let row = try rows.next() {
            if let key = MetaKey(rawValue: row[0]), let value: String = row[1] { values[key] = value }
        }
        return values
    }

    static func setMeta(_ key: MetaKey, _ value: String?, _ db: Database) throws {
        if let value {
            try db.execute(
                sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [key.rawValue, value])
        } else {
            try db.execute(sql: "DELETE FROM meta WHERE key = ?", arguments: [key.rawValue])
        }
    }

    func meta(_ key: MetaKey) throws -> String? {
        try writer.read { db in try Self.meta(key, db) }
    }

    func setMeta(_ key: MetaKey, _ value: String?) throws {
        try writer.write { db in try Self.setMeta(key, value, db) }
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
