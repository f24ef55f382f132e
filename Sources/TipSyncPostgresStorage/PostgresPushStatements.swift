package import PostgresNIO
import TipSyncServerBasics
import TipSyncStorage

/// A push's statements, prepared once per connection (PostgresNIO names and caches them): an
/// unnamed statement is parsed and planned by PostgreSQL again every time. A push that continues its
/// device's log is ``Append`` alone (one round trip); any other push is the transaction of
/// ``LockDevice`` then ``Append``.
///
/// Each is named here: PostgresNIO's default name is the type's reflected name, made anew at every
/// use. (So are ``PostgresPullStatement`` and ``PostgresTokenStatement``.)
package enum PostgresPushStatements {
    /// Locks the device's row (one push per device at a time, whichever instance receives it) and
    /// reads its highest stored seq, the cursor generation and whether `token` still names the device
    /// (a token the server only remembered, ``UnconfirmedToken``; an empty hash names none).
    package struct LockDevice: PostgresPreparedStatement {
        package static let name = "tipsync_lock_device"
        package static let sql = """
            SELECT (SELECT highest_seq FROM device WHERE account = $1 AND name = $2 FOR UPDATE),
                (SELECT value FROM server_meta WHERE key = 'cursorGeneration'),
                EXISTS (SELECT 1 FROM token WHERE hash = $3 AND account = $1 AND device = $2)
            """
        package typealias Row = (highestSeq: Int64?, generation: String?, tokenConfirmed: Bool)

        package var account: Int64
        package var device: String
        package var tokenHash: String

        package func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(account)
            bindings.append(device)
            bindings.append(tokenHash)
            return bindings
        }

        package func decodeRow(_ row: PostgresRow) throws -> Row {
            let cells = row.makeRandomAccess()
            return (try cells[0].decode(Int64?.self), try cells[1].decode(String?.self), try cells[2].decode(Bool.self))
        }
    }

    /// Appends `seqs.count` entries at the positions the account's counter hands out (its row lock held
    /// to commit, so positions become visible in order), moves the device's highest seq to `highestSeq`
    /// and notifies every listening instance when — and only if — the transaction commits; but only if
    /// the device's highest stored seq is still `expectedHighest` (the one its ``PushPlan`` was made
    /// on) and a remembered token still names the device. The device's row is updated (and so locked)
    /// first; the account's counter and the append happen only when that update matched, so a push the
    /// plan does not fit changes nothing and returns no row.
    ///
    /// Alone, in its own implicit transaction, it is the whole push planned without reading the
    /// device (one round trip): a retry, a gap, a device pushing through two instances at once or a
    /// revoked token match nothing, and the caller plans again under ``LockDevice``, which says which
    /// it was. After ``LockDevice`` in a transaction, with the seq that read, it always matches. Its
    /// row: the account's counter after the append, where its last compaction reached, and the cursor
    /// generation.
    package struct Append: PostgresPreparedStatement {
        package static let name = "tipsync_append"
        package static let sql = """
            WITH moved AS (
                UPDATE device SET highest_seq = $8 WHERE account = $2 AND name = $3 AND highest_seq = $11
                    AND ($12::TEXT IS NULL OR EXISTS (SELECT 1 FROM token WHERE hash = $12 AND account = $2 AND device = $3))
                RETURNING 1),
            counter AS (
                UPDATE account SET next_position = next_position + $1 WHERE id = $2 AND EXISTS (SELECT 1 FROM moved)
                RETURNING next_position, compacted_at_position),
            appended AS (
                INSERT INTO change (account, position, device, seq, hlc, kind, body)
                SELECT $2, counter.next_position - $1 + batch.o, $3, s, h, k, b
                FROM counter,
                    UNNEST($4::BIGINT[], $5::BIGINT[], $6::TEXT[], $7::TEXT[]) WITH ORDINALITY AS batch(s, h, k, b, o))
            SELECT next_position, compacted_at_position,
                (SELECT value FROM server_meta WHERE key = 'cursorGeneration'), pg_notify($9, $10)::TEXT
            FROM counter
            """
        package typealias Row = (nextPosition: Int64, compactedAtPosition: Int64, generation: String?)

        package var account: Int64
        package var device: String
        package var seqs: [Int64]
        package var hlcs: [Int64]
        package var kinds: [String]
        package var bodies: [String]
        package var highestSeq: Int64
        package var channel: String
        package var expectedHighest: Int64
        /// The hash of a token the server only remembered (``UnconfirmedToken``): nothing is stored
        /// unless it still names the device. `nil`: the token was confirmed already.
        package var tokenHash: String?

        package func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 12)
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
            bindings.append(expectedHighest)
            if let tokenHash { bindings.append(tokenHash) } else { bindings.appendNull() }
            return bindings
        }

        package func decodeRow(_ row: PostgresRow) throws -> Row {
            let cells = row.makeRandomAccess()
            return (try cells[0].decode(Int64.self), try cells[1].decode(Int64.self), try cells[2].decode(String?.self))
        }
    }
}
