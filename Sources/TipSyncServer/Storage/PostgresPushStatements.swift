import PostgresNIO

/// A push's two statements, prepared once per connection (PostgresNIO names and caches them): a
/// single-change push is mostly these two, and an unnamed statement is parsed and planned by
/// PostgreSQL again every time.
enum PostgresPushStatements {
    /// Locks the device's row (one push per device at a time, whichever instance receives it) and
    /// reads its highest stored seq, the cursor generation and whether `token` still names the device
    /// (a token the server only remembered, ``UnconfirmedToken``; an empty hash names none).
    struct LockDevice: PostgresPreparedStatement {
        static let sql = """
            SELECT (SELECT highest_seq FROM device WHERE account = $1 AND name = $2 FOR UPDATE),
                (SELECT value FROM server_meta WHERE key = 'cursorGeneration'),
                EXISTS (SELECT 1 FROM token WHERE hash = $3 AND account = $1 AND device = $2)
            """
        typealias Row = (highestSeq: Int64?, generation: String?, tokenConfirmed: Bool)

        var account: Int64
        var device: String
        var tokenHash: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(account)
            bindings.append(device)
            bindings.append(tokenHash)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let cells = row.makeRandomAccess()
            return (try cells[0].decode(Int64?.self), try cells[1].decode(String?.self), try cells[2].decode(Bool.self))
        }
    }

    /// Appends `seqs.count` entries at the positions the account's counter hands out (its row lock held
    /// to commit, so positions become visible in order), moves the device's highest seq and notifies
    /// every listening instance when — and only if — the transaction commits. Its row: the account's
    /// counter after the append, and where its last compaction reached.
    struct Append: PostgresPreparedStatement {
        static let sql = """
            WITH counter AS (
                UPDATE account SET next_position = next_position + $1 WHERE id = $2
                RETURNING next_position, compacted_at_position),
            appended AS (
                INSERT INTO change (account, position, device, seq, hlc, kind, body)
                SELECT $2, (SELECT next_position FROM counter) - $1 + batch.o, $3, s, h, k, b
                FROM UNNEST($4::BIGINT[], $5::BIGINT[], $6::TEXT[], $7::TEXT[]) WITH ORDINALITY AS batch(s, h, k, b, o)),
            moved AS (
                UPDATE device SET highest_seq = $8 WHERE account = $2 AND name = $3)
            SELECT next_position, compacted_at_position, pg_notify($9, $10)::TEXT
            FROM counter
            """
        typealias Row = (nextPosition: Int64, compactedAtPosition: Int64)

        var account: Int64
        var device: String
        var seqs: [Int64]
        var hlcs: [Int64]
        var kinds: [String]
        var bodies: [String]
        var highestSeq: Int64
        var channel: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 10)
            bindings.append(Int64(seqs.count))
            bindings.append(account)
            bindings.append(device)
            bindings.append(seqs)
            bindings.append(hlcs)
            bindings.append(kinds)
            bindings.append(bodies)
            bindings.append(highestSeq)
            bindings.append(channel)
            bindings.append(String(account))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let cells = row.makeRandomAccess()
            return (try cells[0].decode(Int64.self), try cells[1].decode(Int64.self))
        }
    }
}
