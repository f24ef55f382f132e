import Foundation
import GRDB
package import TipSyncServerBasics
package import TipSyncStorage

extension SQLiteSyncStore {
    package func ensureAccount(name: String, at now: Int64) async throws -> (id: Int64, created: Bool) {
        try await pool.write { db in
            if let id = try Int64.fetchOne(db, sql: "SELECT id FROM account WHERE name = ?", arguments: [name]) {
                return (id, false)
            }
            try db.execute(sql: "INSERT INTO account (name, createdAt) VALUES (?, ?)", arguments: [name, now])
            return (db.lastInsertedRowID, true)
        }
    }

    package func accounts(after: String?, limit: Int) async throws -> [AccountSummary] {
        try await read { db in
            // TEXT compares with BINARY collation: by UTF-8 bytes, the order protocol.md names.
            try Row.fetchAll(
                db,
                sql: """
                    SELECT name, createdAt,
                        (SELECT COUNT(*) FROM device WHERE device.account = account.id) AS devices,
                        (SELECT COUNT(*) FROM change WHERE change.account = account.id) AS logEntries
                    FROM account WHERE name > ? ORDER BY name LIMIT ?
                    """, arguments: [after ?? "", limit]
            ).map { row in
                AccountSummary(
                    name: row["name"], createdAt: row["createdAt"], devices: row["devices"],
                    logEntries: row["logEntries"])
            }
        }
    }

    package func quietDevices(seenBefore: Int64, limit: Int) async throws -> [QuietDevice] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT account.name AS account, device.name AS device, device.lastSeen AS lastSeen
                    FROM device JOIN account ON account.id = device.account
                    WHERE device.lastSeen IS NULL OR device.lastSeen < ?
                    ORDER BY COALESCE(device.lastSeen, 0), account.name, device.name LIMIT ?
                    """, arguments: [seenBefore, limit]
            ).map { QuietDevice(account: $0["account"], device: $0["device"], lastSeen: $0["lastSeen"]) }
        }
    }

    package func accountDetails(name: String) async throws -> AccountDetails? {
        try await read { db in
            guard
                let account = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT id, name, createdAt, nextPosition, compactedThrough, compactedAt, compactedAtPosition
                        FROM account WHERE name = ?
                        """, arguments: [name])
            else { return nil }
            let id: Int64 = account["id"]
            let devices = try Row.fetchAll(
                db,
                sql: """
                    SELECT name, highestSeq, lastSeen, revokedAt, pulledThrough, context,
                        (SELECT COUNT(*) FROM token WHERE token.account = device.account AND token.device = device.name)
                            AS tokens
                    FROM device WHERE account = ? ORDER BY name
                    """, arguments: [id]
            ).map { row in
                DeviceDetails(
                    name: row["name"], highestSeq: row["highestSeq"], lastSeen: row["lastSeen"], tokens: row["tokens"],
                    revokedAt: row["revokedAt"], pulledThrough: row["pulledThrough"], context: row["context"])
            }
            let entries =
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM change WHERE account = ?", arguments: [id]) ?? 0
            let logEnd: Int64 = account["nextPosition"]
            let compactedAtPosition: Int64 = account["compactedAtPosition"]
            return AccountDetails(
                name: account["name"], createdAt: account["createdAt"], logEntries: entries, logEnd: logEnd,
                compactedThrough: account["compactedThrough"], lastCompactionAt: account["compactedAt"],
                entriesSinceCompaction: logEnd - compactedAtPosition, devices: devices)
        }
    }

    package func eraseAccount(name: String, at now: Int64) async throws -> (id: Int64, logEntries: Int)? {
        let erased = try await pool.write { db -> (id: Int64, logEntries: Int)? in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM account WHERE name = ?", arguments: [name])
            else { return nil }
            try db.execute(sql: "DELETE FROM change WHERE account = ?", arguments: [id])
            let entries = db.changesCount
            try db.execute(sql: "DELETE FROM kept_state_page WHERE account = ?", arguments: [id])
            try db.execute(
                sql: "INSERT OR IGNORE INTO erased_token (hash, erasedAt) SELECT hash, ? FROM token WHERE account = ?",
                arguments: [now, id])
            try db.execute(sql: "DELETE FROM token WHERE account = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM device WHERE account = ?", arguments: [id])
            try Self.apply(TipUsageCounters.deltas(replacing: try Self.tipUsage(account: id, db), with: []), db)
            try db.execute(sql: "DELETE FROM tip_usage WHERE account = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM account WHERE id = ?", arguments: [id])
            try db.execute(
                sql: """
                    INSERT INTO erased_account (nameHash, erasedAt) VALUES (?, ?)
                    ON CONFLICT (nameHash) DO UPDATE SET erasedAt = MAX(erasedAt, excluded.erasedAt)
                    """, arguments: [TokenHasher.hash(name), now])
            return (id, entries)
        }
        // The erased rows were zeroed in the pages the transaction wrote, but earlier versions of
        // those pages still sit in the write-ahead log until it is checkpointed: copy the log into
        // the database and empty it now, not whenever SQLite gets to it.
        if erased != nil { try await truncateWriteAheadLog() }
        return erased
    }

    /// Checkpoints the write-ahead log into the database and truncates it to zero bytes. A reader
    /// in the middle of a transaction can hold the log back; it is tried again until it finishes.
    package func truncateWriteAheadLog() async throws {
        for _ in 0..<50 {
            let complete = try await pool.writeWithoutTransaction { db -> Bool in
                let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                return (row?[0] as Int64?) == 0
            }
            if complete { return }
            await Task.yield()
        }
    }

    package func revokeTokens(accountName: String, device: String, at now: Int64) async throws -> (
        account: Int64, tokens: Int
    )? {
        try await pool.write { db in
            guard
                let account = try Int64.fetchOne(
                    db, sql: "SELECT id FROM account WHERE name = ?", arguments: [accountName]),
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM device WHERE account = ? AND name = ?", arguments: [account, device])
                    != nil
            else { return nil }
            try db.execute(sql: "DELETE FROM token WHERE account = ? AND device = ?", arguments: [account, device])
            let tokens = db.changesCount
            try db.execute(
                sql: "UPDATE device SET revokedAt = MAX(COALESCE(revokedAt, 0), ?) WHERE account = ? AND name = ?",
                arguments: [now, account, device])
            return (account, tokens)
        }
    }

    package func recordSeen(_ seen: [DeviceIdentity: Int64]) async throws {
        guard !seen.isEmpty else { return }
        try await pool.write { db in
            let update = try db.cachedStatement(
                sql: "UPDATE device SET lastSeen = MAX(COALESCE(lastSeen, 0), ?) WHERE account = ? AND name = ?")
            for (identity, time) in seen {
                try update.execute(arguments: [time, identity.accountID, identity.device])
            }
        }
    }

    package func recordContexts(_ contexts: [DeviceIdentity: String]) async throws {
        guard !contexts.isEmpty else { return }
        try await pool.write { db in
            let update = try db.cachedStatement(sql: "UPDATE device SET context = ? WHERE account = ? AND name = ?")
            for (identity, context) in contexts {
                try update.execute(arguments: [context, identity.accountID, identity.device])
            }
        }
    }

    package func recordPulled(_ pulled: [DeviceIdentity: Int64]) async throws {
        guard !pulled.isEmpty else { return }
        try await pool.write { db in
            let update = try db.cachedStatement(
                sql: "UPDATE device SET pulledThrough = ? WHERE account = ? AND name = ?")
            for (identity, position) in pulled {
                try update.execute(arguments: [position, identity.accountID, identity.device])
            }
        }
    }

    package func signIn(accountName: String, device: String, issuedAt: Int64?, at now: Int64) async throws
        -> SignInResult
    {
        // Most requests find everything in place: a read, no write.
        @Sendable func lookup(_ db: Database) throws -> SignInResult? {
            let erasedAt = try Int64.fetchOne(
                db, sql: "SELECT erasedAt FROM erased_account WHERE nameHash = ?",
                arguments: [TokenHasher.hash(accountName)])
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT account.id AS id, device.revokedAt AS revokedAt FROM account
                    JOIN device ON device.account = account.id AND device.name = ?
                    WHERE account.name = ?
                    """, arguments: [device, accountName])
            return SignInResult.decide(
                identity: row.map { DeviceIdentity(accountID: $0["id"], device: device) },
                revokedAt: row?["revokedAt"], erasedAt: erasedAt, issuedAt: issuedAt)
        }
        if let result = try await read({ db in try lookup(db) }) { return result }
        return try await pool.write { db in
            if let result = try lookup(db) { return result }
            try db.execute(
                sql: "INSERT INTO account (name, createdAt) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                arguments: [accountName, now])
            let account = try Int64.fetchOne(
                db, sql: "SELECT id FROM account WHERE name = ?", arguments: [accountName])!
            try db.execute(
                sql: "INSERT OR IGNORE INTO device (account, name) VALUES (?, ?)", arguments: [account, device])
            return .identity(DeviceIdentity(accountID: account, device: device))
        }
    }

    package func insertAdminKey(hash: String, name: String, at now: Int64) async throws -> Bool {
        try await pool.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM admin_key WHERE name = ?", arguments: [name]) != nil {
                return false
            }
            try db.execute(
                sql: "INSERT INTO admin_key (hash, name, createdAt) VALUES (?, ?, ?)", arguments: [hash, name, now])
            return true
        }
    }

    package func adminKeys() async throws -> [AdminKeyRecord] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT name, createdAt FROM admin_key ORDER BY name").map {
                AdminKeyRecord(name: $0["name"], createdAt: $0["createdAt"])
            }
        }
    }

    package func revokeAdminKey(name: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM admin_key WHERE name = ?", arguments: [name])
            return db.changesCount > 0
        }
    }

    package func adminKeyName(forHash hash: String) async throws -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT name FROM admin_key WHERE hash = ?", arguments: [hash])
        }
    }

    package func insertConsoleSession(_ session: ConsoleSessionRecord, now: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM console_session WHERE expiresAt <= ?", arguments: [now])
            try db.execute(
                sql: """
                    INSERT INTO console_session (idHash, adminKeyHash, adminKeyName, csrf, expiresAt)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [
                    session.idHash, session.adminKeyHash, session.adminKeyName, session.csrf, session.expiresAt,
                ])
        }
    }

    package func consoleSession(idHash: String, now: Int64) async throws -> ConsoleSessionRecord? {
        try await read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT adminKeyHash, adminKeyName, csrf, expiresAt FROM console_session
                    WHERE idHash = ? AND expiresAt > ?
                    """, arguments: [idHash, now]
            ).map {
                ConsoleSessionRecord(
                    idHash: idHash, adminKeyHash: $0[0], adminKeyName: $0[1], csrf: $0[2], expiresAt: $0[3])
            }
        }
    }

    package func deleteConsoleSession(idHash: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM console_session WHERE idHash = ?", arguments: [idHash])
        }
    }
}
