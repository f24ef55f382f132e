import NIOCore
import PostgresNIO
import TipSyncServerBasics
package import TipSyncStorage

/// ``KeptStatePage``s on PostgreSQL: the `kept_state_page` table, one row per full page of a
/// compacted account's state; a pull reads one in its one statement (``PostgresPullStatement``).
extension PostgresSyncStore {
    package func statePages(account: Int64) async throws -> StatePages {
        // One statement: one snapshot of the log and of the compaction it follows.
        var builtFor: Int64 = 0
        var entries: [(position: Int64, text: ByteBuffer)] = []
        for try await row in try await client.query(
            """
            SELECT (SELECT compacted_at_position FROM account WHERE id = \(account)), position, body
            FROM change WHERE account = \(account) ORDER BY position
            """, logger: logger)
        {
            let cells = row.makeRandomAccess()
            builtFor = try cells[0].decode(Int64?.self) ?? 0
            guard let body = cells[2].bytes else { throw StoreError("a change's body is NULL") }
            entries.append((try cells[1].decode(Int64.self), body))
        }
        return StatePages(builtFor: builtFor, log: entries)
    }

    package func keepStatePages(_ pages: [KeptStatePage], account: Int64, builtFor: Int64) async throws -> Bool {
        try await transaction { connection -> Bool in
            // The account row lock, as a compaction's drop takes it: neither passes the other.
            let latest = try await rows(
                "SELECT compacted_at_position FROM account WHERE id = \(account) FOR UPDATE", as: Int64.self,
                on: connection)
            guard latest.first == builtFor else { return false }
            try await connection.query("DELETE FROM kept_state_page WHERE account = \(account)", logger: logger)
            for page in pages {
                try await connection.query(
                    """
                    INSERT INTO kept_state_page (account, after_position, built_for, last_position, count,
                        ended_by_bytes, length, crc32, adler32, bytes)
                    VALUES (\(account), \(page.after), \(builtFor), \(page.last), \(Int32(page.count)),
                        \(page.endedByBytes), \(Int32(page.segment.length)), \(Int64(page.segment.crc32)),
                        \(Int64(page.segment.adler32)), \(page.segment.bytes))
                    """, logger: logger)
            }
            return true
        }
    }
}
