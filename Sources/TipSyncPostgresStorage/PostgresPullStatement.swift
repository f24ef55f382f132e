package import PostgresNIO
import TipSyncServerBasics
package import TipSyncStorage

/// A pull's one statement, prepared once per connection (PostgresNIO names and caches it), so
/// PostgreSQL parses and plans it once, not at every pull and every stream's opening — in a
/// reconnect storm every device opens its stream at once, and an unnamed statement's planning was
/// most of the database's CPU for it.
///
/// One round trip and one snapshot: the account's counters, the cursor generation, whether a
/// remembered token still names its device (``UnconfirmedToken``), the named device's highest seq,
/// and the page — each row carries the first five; no change after the cursor is one row of NULLs.
/// Asked for kept pages (``KeptStatePage``), a page kept after the account's latest compaction that
/// starts at the cursor comes instead of the page's entries, in the one row.
/// `next_position` as committed is the highest position handed out (never lowered, not even by
/// compaction), so no cursor this database minted lies beyond it.
package struct PostgresPullStatement: PostgresPreparedStatement {
    package static let name = "tipsync_pull"
    package static let sql = """
        SELECT head.*, kept.last_position, kept.count, kept.ended_by_bytes, kept.length, kept.crc32, kept.adler32,
            kept.bytes, page.position, page.body
        FROM (SELECT
                (SELECT compacted_through FROM account WHERE id = $1),
                (SELECT next_position FROM account WHERE id = $1),
                (SELECT value FROM server_meta WHERE key = 'cursorGeneration'),
                EXISTS (SELECT 1 FROM token WHERE hash = $2 AND account = $3 AND device = $4),
                (SELECT highest_seq FROM device WHERE account = $1 AND name = $5)
            ) AS head
        LEFT JOIN LATERAL (
            SELECT k.* FROM kept_state_page k JOIN account a ON a.id = k.account AND k.built_for = a.compacted_at_position
            WHERE $8 AND k.account = $1 AND k.after_position = $6
        ) AS kept ON true
        LEFT JOIN LATERAL (
            SELECT position, body FROM change
            WHERE account = $1 AND position > $6 AND kept.count IS NULL ORDER BY position LIMIT $7
        ) AS page ON true
        """
    package struct Row {
        package var compactedThrough: Int64?
        package var logEnd: Int64?
        package var generation: String?
        package var tokenConfirmed: Bool
        package var highestSeq: Int64?
        package var keptLast: Int64?
        package var keptCount: Int32?
        package var keptEndedByBytes: Bool?
        package var keptLength: Int32?
        package var keptCRC32: Int64?
        package var keptAdler32: Int64?
        package var keptBytes: ByteBuffer?
        package var position: Int64?
        package var body: ByteBuffer?

        /// The kept page the row carries, if any.
        package func kept(after: Int64) -> KeptStatePage? {
            guard let keptLast, let keptCount, let keptEndedByBytes, let keptLength, let keptCRC32, let keptAdler32,
                let keptBytes
            else { return nil }
            return KeptStatePage(
                after: after, last: keptLast, count: Int(keptCount), endedByBytes: keptEndedByBytes,
                segment: DeflatedSegment(
                    bytes: keptBytes, length: Int(keptLength), crc32: UInt32(truncatingIfNeeded: keptCRC32),
                    adler32: UInt32(truncatingIfNeeded: keptAdler32)))
        }
    }

    package var account: Int64
    /// The token to confirm: its hash and the device it should name (empty: none).
    package var tokenHash: String
    package var tokenAccount: Int64
    package var tokenDevice: String
    /// The device whose highest seq to read (empty: none).
    package var device: String
    package var after: Int64
    /// Rows to read: the page's limit and one more, to know whether there is more.
    package var fetch: Int64
    /// Whether a kept page may answer instead (``ChangeLogStore/pull(account:after:limit:device:confirming:keptPages:)``).
    package var keptPages: Bool

    package func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 8)
        bindings.append(account)
        bindings.append(tokenHash)
        bindings.append(tokenAccount)
        bindings.append(tokenDevice)
        bindings.append(device)
        bindings.append(after)
        bindings.append(fetch)
        bindings.append(keptPages)
        return bindings
    }

    package func decodeRow(_ row: PostgresRow) throws -> Row {
        let cells = row.makeRandomAccess()
        // Each body as the bytes received (`TEXT`: UTF-8 as stored), not made into a string.
        return Row(
            compactedThrough: try cells[0].decode(Int64?.self), logEnd: try cells[1].decode(Int64?.self),
            generation: try cells[2].decode(String?.self), tokenConfirmed: try cells[3].decode(Bool.self),
            highestSeq: try cells[4].decode(Int64?.self), keptLast: try cells[5].decode(Int64?.self),
            keptCount: try cells[6].decode(Int32?.self), keptEndedByBytes: try cells[7].decode(Bool?.self),
            keptLength: try cells[8].decode(Int32?.self), keptCRC32: try cells[9].decode(Int64?.self),
            keptAdler32: try cells[10].decode(Int64?.self), keptBytes: cells[11].bytes,
            position: try cells[12].decode(Int64?.self), body: cells[13].bytes)
    }
}
