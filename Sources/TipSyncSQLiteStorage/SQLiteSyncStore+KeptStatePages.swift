import Foundation
package import GRDB
import NIOCore
import TipSyncServerBasics
package import TipSyncStorage

/// ``KeptStatePage``s on SQLite: the `kept_state_page` table, one row per full page of a compacted
/// account's state.
extension SQLiteSyncStore {
    package func statePages(account: Int64) async throws -> StatePages {
        try await read { db in
            let builtFor =
                try Int64.fetchOne(
                    db, sql: "SELECT compactedAtPosition FROM account WHERE id = ?", arguments: [account])
                ?? 0
            let log = try Row.fetchCursor(
                db, sql: "SELECT position, body FROM change WHERE account = ? ORDER BY position", arguments: [account])
            var entries: [(position: Int64, text: ByteBuffer)] = []
            while let row = try log.next() {
                entries.append((row["position"], ByteBuffer(string: row["body"] as String)))
            }
            return StatePages(builtFor: builtFor, log: entries)
        }
    }

    package func keepStatePages(_ pages: [KeptStatePage], account: Int64, builtFor: Int64) async throws -> Bool {
        try await pool.write { db in
            let latest = try Int64.fetchOne(
                db, sql: "SELECT compactedAtPosition FROM account WHERE id = ?", arguments: [account])
            guard latest == builtFor else { return false }
            try db.execute(sql: "DELETE FROM kept_state_page WHERE account = ?", arguments: [account])
            for page in pages {
                try db.execute(
                    sql: """
                        INSERT INTO kept_state_page (account, afterPosition, builtFor, lastPosition, count,
                            endedByBytes, length, crc32, adler32, bytes)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        account, page.after, builtFor, page.last, page.count, page.endedByBytes,
                        page.segment.length, Int64(page.segment.crc32), Int64(page.segment.adler32),
                        Data(page.segment.bytes.readableBytesView),
                    ])
            }
            return true
        }
    }

    /// The kept page starting after `after`, if it was built after the compaction `builtFor`.
    package static func keptPage(account: Int64, after: Int64, builtFor: Int64, _ db: Database) throws -> KeptStatePage?
    {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT lastPosition, count, endedByBytes, length, crc32, adler32, bytes FROM kept_state_page
                        WHERE account = ? AND afterPosition = ? AND builtFor = ?
                        """),
                arguments: [account, after, builtFor])
        else { return nil }
        // The blob copied once, from SQLite's row into the buffer the answer sends.
        let bytes = try row.withUnsafeData(named: "bytes") { ByteBuffer(bytes: $0 ?? Data()) }
        let crc32: Int64 = row["crc32"]
        let adler32: Int64 = row["adler32"]
        return KeptStatePage(
            after: after, last: row["lastPosition"], count: row["count"], endedByBytes: row["endedByBytes"],
            segment: DeflatedSegment(
                bytes: bytes, length: row["length"], crc32: UInt32(truncatingIfNeeded: crc32),
                adler32: UInt32(truncatingIfNeeded: adler32)))
    }
}
