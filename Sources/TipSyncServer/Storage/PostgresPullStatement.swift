import PostgresNIO

/// A pull's one statement, prepared once per connection (PostgresNIO names and caches it), so
/// PostgreSQL parses and plans it once, not at every pull and every stream's opening — in a
/// reconnect storm every device opens its stream at once, and an unnamed statement's planning was
/// most of the database's CPU for it.
///
/// One round trip and one snapshot: the account's counters, the cursor generation, whether a
/// remembered token still names its device (``UnconfirmedToken``), the named device's highest seq,
/// and the page — each row carries the first five; no change after the cursor is one row of NULLs.
/// `next_position` as committed is the highest position handed out (never lowered, not even by
/// compaction), so no cursor this database minted lies beyond it.
struct PostgresPullStatement: PostgresPreparedStatement {
    static let name = "tipsync_pull"
    static let sql = """
        SELECT head.*, page.position, page.body
        FROM (SELECT
                (SELECT compacted_through FROM account WHERE id = $1),
                (SELECT next_position FROM account WHERE id = $1),
                (SELECT value FROM server_meta WHERE key = 'cursorGeneration'),
                EXISTS (SELECT 1 FROM token WHERE hash = $2 AND account = $3 AND device = $4),
                (SELECT highest_seq FROM device WHERE account = $1 AND name = $5)
            ) AS head
        LEFT JOIN LATERAL (
            SELECT position, body FROM change WHERE account = $1 AND position > $6 ORDER BY position LIMIT $7
        ) AS page ON true
        """
    typealias Row = (
        compactedThrough: Int64?, logEnd: Int64?, generation: String?, tokenConfirmed: Bool, highestSeq: Int64?,
        position: Int64?, body: ByteBuffer?
    )

    var account: Int64
    /// The token to confirm: its hash and the device it should name (empty: none).
    var tokenHash: String
    var tokenAccount: Int64
    var tokenDevice: String
    /// The device whose highest seq to read (empty: none).
    var device: String
    var after: Int64
    /// Rows to read: the page's limit and one more, to know whether there is more.
    var fetch: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(account)
        bindings.append(tokenHash)
        bindings.append(tokenAccount)
        bindings.append(tokenDevice)
        bindings.append(device)
        bindings.append(after)
        bindings.append(fetch)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let cells = row.makeRandomAccess()
        // Each body as the bytes received (`TEXT`: UTF-8 as stored), not made into a string.
        return (
            try cells[0].decode(Int64?.self), try cells[1].decode(Int64?.self), try cells[2].decode(String?.self),
            try cells[3].decode(Bool.self), try cells[4].decode(Int64?.self), try cells[5].decode(Int64?.self),
            cells[6].bytes
        )
    }
}
