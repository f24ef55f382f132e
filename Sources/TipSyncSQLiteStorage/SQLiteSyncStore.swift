import Foundation
package import GRDB
package import TipSyncCore
package import TipSyncServerBasics
package import TipSyncStorage

#if canImport(SQLite3)
    import SQLite3
#else
    import GRDBSQLite
#endif

/// ``SyncStore`` on one SQLite file (WAL). SQLite has one writer at a time and a reader sees only
/// committed transactions, so positions (the cursors) become visible in order: a cursor handed out
/// never skips a change committed later.
package struct SQLiteSyncStore: SyncStore {
    package let pool: DatabasePool
    /// Pushes that arrive while the writer is busy share its next transaction.
    package let pushes: GroupCommit
    /// The write-ahead log's pages, counted by the writer while a server checkpoints beside it.
    package let logPages = LogPages()

    /// Opens (creating) the database at `path`.
    package init(path: String) throws {
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Deleted content is overwritten with zeros, not left in free pages: an erased account's
            // bytes leave the database file (right to erasure), compaction's dropped entries too.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        pushes = GroupCommit(pool: pool)
    }

    /// Frees SQLite's page caches and closes idle reader connections (they reopen on demand). What a
    /// burst of traffic warmed stays resident otherwise, up to SQLite's cache size per connection.
    ///
    /// GRDB's `releaseMemory()` blocks its thread until every reader is back in the pool, and a
    /// reader comes back from the task that used it, on Swift's cooperative threads: it runs on a
    /// Dispatch thread of its own, so that it never takes the thread a read needs to finish.
    package func releaseMemory() async {
        let pool = pool
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global(qos: .utility).async {
                pool.releaseMemory()
                done.resume()
            }
        }
    }

    package static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE account (
                        id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,
                        compactedThrough INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE device (
                        account INTEGER NOT NULL REFERENCES account(id), name TEXT NOT NULL,
                        highestSeq INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (account, name));
                    CREATE TABLE token (
                        hash TEXT PRIMARY KEY NOT NULL, account INTEGER NOT NULL, device TEXT NOT NULL,
                        FOREIGN KEY (account, device) REFERENCES device(account, name));
                    CREATE TABLE change (
                        position INTEGER PRIMARY KEY AUTOINCREMENT, account INTEGER NOT NULL,
                        device TEXT NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL, kind TEXT NOT NULL,
                        body TEXT NOT NULL, UNIQUE (account, device, seq));
                    CREATE INDEX change_by_account ON change (account, position);
                    """)
        }
        migrator.registerMigration("v2-cursor-generation") { db in
            try db.execute(
                sql: """
                    CREATE TABLE server_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    INSERT INTO server_meta (key, value) VALUES ('cursorGeneration', lower(hex(randomblob(8))));
                    """)
        }
        // Positions were one sequence for the whole server, so a cursor showed how much other
        // accounts wrote. Now each account numbers its own changes 1, 2, 3… (`nextPosition` is the
        // last handed out). Existing entries are renumbered in their order, and the cursor
        // generation rotates: every old cursor is refused once and its device pulls from the start
        // (merging is idempotent, so that costs bytes, never correctness).
        migrator.registerMigration("v3-per-account-positions") { db in
            try db.execute(
                sql: """
                    ALTER TABLE account ADD COLUMN nextPosition INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE change_v3 (
                        account INTEGER NOT NULL, position INTEGER NOT NULL, device TEXT NOT NULL,
                        seq INTEGER NOT NULL, hlc INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
                        PRIMARY KEY (account, position), UNIQUE (account, device, seq));
                    INSERT INTO change_v3 (account, position, device, seq, hlc, kind, body)
                        SELECT account, ROW_NUMBER() OVER (PARTITION BY account ORDER BY position),
                            device, seq, hlc, kind, body
                        FROM change;
                    UPDATE account SET
                        compactedThrough = (
                            SELECT COUNT(*) FROM change
                            WHERE change.account = account.id AND change.position <= account.compactedThrough),
                        nextPosition = (SELECT COUNT(*) FROM change WHERE change.account = account.id);
                    DROP TABLE change;
                    ALTER TABLE change_v3 RENAME TO change;
                    UPDATE server_meta SET value = lower(hex(randomblob(8))) WHERE key = 'cursorGeneration';
                    """)
        }
        // Administration: when things were created and last seen, revocations that also cover JWTs,
        // admin keys (hashes only), erased names (hashes only), and compaction bookkeeping.
        migrator.registerMigration("v4-administration") { db in
            try db.execute(
                sql: """
                    ALTER TABLE account ADD COLUMN createdAt INTEGER;
                    ALTER TABLE account ADD COLUMN compactedAt INTEGER;
                    ALTER TABLE account ADD COLUMN compactedAtPosition INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE device ADD COLUMN lastSeen INTEGER;
                    ALTER TABLE device ADD COLUMN revokedAt INTEGER;
                    ALTER TABLE token ADD COLUMN createdAt INTEGER;
                    CREATE INDEX token_by_device ON token (account, device);
                    CREATE TABLE admin_key (
                        hash TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL UNIQUE, createdAt INTEGER NOT NULL);
                    CREATE TABLE erased_account (nameHash TEXT PRIMARY KEY NOT NULL, erasedAt INTEGER NOT NULL);
                    """)
        }
        // Tip usage per account (the console's tips page), derived from the log by
        // `TipUsageSummarizer` through `tipUsageThrough`.
        migrator.registerMigration("v5-tip-usage") { db in
            try db.execute(
                sql: """
                    ALTER TABLE account ADD COLUMN tipUsageThrough INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE tip_usage (
                        account INTEGER NOT NULL, tip TEXT NOT NULL, reason TEXT, displays INTEGER NOT NULL,
                        firstDisplayAt INTEGER, invalidatedAt INTEGER, PRIMARY KEY (account, tip));
                    CREATE INDEX tip_usage_by_tip ON tip_usage (tip);
                    CREATE INDEX account_by_compaction ON account (compactedAt);
                    """)
        }
        // Per-tip totals kept by deltas (TipUsageCounters). The usage derived so far is derived
        // again with them by the summarizer.
        migrator.registerMigration("v6-tip-counters") { db in
            try db.execute(
                sql: """
                    CREATE TABLE tip_counter (
                        tip TEXT NOT NULL, name TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (tip, name));
                    DELETE FROM tip_usage;
                    UPDATE account SET tipUsageThrough = 0;
                    """)
        }
        // How far each device has pulled (the console shows how far behind the log it is).
        migrator.registerMigration("v7-pulled-through") { db in
            try db.execute(sql: "ALTER TABLE device ADD COLUMN pulledThrough INTEGER")
        }
        // Tip usage counts the catalog's display limits and keeps daily series: derived again.
        migrator.registerMigration("v8-tip-usage-series") { db in
            try db.execute(
                sql: """
                    DELETE FROM tip_usage;
                    DELETE FROM tip_counter;
                    UPDATE account SET tipUsageThrough = 0;
                    """)
        }
        // Every uploaded catalog is kept (versions, diffs, restore); the current one stays in
        // server_meta and becomes version 1.
        migrator.registerMigration("v9-catalog-versions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE catalog_version (
                        version INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT NOT NULL, uploadedBy TEXT NOT NULL,
                        uploadedAt INTEGER NOT NULL, restoredFrom INTEGER);
                    INSERT INTO catalog_version (text, uploadedBy, uploadedAt)
                        SELECT value, 'before versions', 0 FROM server_meta WHERE key = 'catalog';
                    """)
        }
        // The log is one B-tree keyed by (account, position), the order every read takes: no rowid
        // table beside the key's index, and no index on (account, device, seq). That one was only a
        // constraint, kept already by the device's `highestSeq` (``PushPlan`` stores a seq only above
        // it, in the writer's transaction, and it survives compaction where the entries do not), and
        // it cost a single-change push 4-5 µs of its 27 µs in the store (docs/benchmark-history.md, twelfth round):
        // another B-tree whose pages every commit rewrites.
        migrator.registerMigration("v10-log-keyed-by-position") { db in
            try db.execute(
                sql: """
                    CREATE TABLE change_v10 (
                        account INTEGER NOT NULL, position INTEGER NOT NULL, device TEXT NOT NULL,
                        seq INTEGER NOT NULL, hlc INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
                        PRIMARY KEY (account, position)) WITHOUT ROWID;
                    INSERT INTO change_v10 (account, position, device, seq, hlc, kind, body)
                        SELECT account, position, device, seq, hlc, kind, body FROM change;
                    DROP TABLE change;
                    ALTER TABLE change_v10 RENAME TO change;
                    """)
        }
        // Each account's participation in a tip's experiment (protocol.md §13.12) beside its tip usage:
        // derived again for every account.
        migrator.registerMigration("v11-experiments") { db in
            try db.execute(
                sql: """
                    ALTER TABLE tip_usage ADD COLUMN experiment TEXT;
                    ALTER TABLE tip_usage ADD COLUMN arm TEXT;
                    ALTER TABLE tip_usage ADD COLUMN reachedAt INTEGER;
                    ALTER TABLE tip_usage ADD COLUMN exposedAt INTEGER;
                    ALTER TABLE tip_usage ADD COLUMN convertedAt INTEGER;
                    CREATE INDEX tip_usage_by_experiment ON tip_usage (experiment) WHERE experiment IS NOT NULL;
                    DELETE FROM tip_usage;
                    DELETE FROM tip_counter;
                    UPDATE account SET tipUsageThrough = 0;
                    """)
        }
        // Pages of each compacted account's state, kept compressed for new devices (``KeptStatePage``).
        migrator.registerMigration("v12-kept-state-pages") { db in
            try db.execute(
                sql: """
                    CREATE TABLE kept_state_page (
                        account INTEGER NOT NULL, afterPosition INTEGER NOT NULL, builtFor INTEGER NOT NULL,
                        lastPosition INTEGER NOT NULL, count INTEGER NOT NULL, endedByBytes INTEGER NOT NULL,
                        length INTEGER NOT NULL, crc32 INTEGER NOT NULL, adler32 INTEGER NOT NULL, bytes BLOB NOT NULL,
                        PRIMARY KEY (account, afterPosition)) WITHOUT ROWID;
                    """)
        }
        // The hashes of erased accounts' device tokens: their devices are told `account_erased`.
        migrator.registerMigration("v13-erased-tokens") { db in
            try db.execute(
                sql:
                    "CREATE TABLE erased_token (hash TEXT PRIMARY KEY NOT NULL, erasedAt INTEGER NOT NULL) WITHOUT ROWID"
            )
        }
        // Console login sessions, seen by every instance (issue 73, item 9).
        migrator.registerMigration("v14-console-sessions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE console_session (
                        idHash TEXT PRIMARY KEY NOT NULL, adminKeyHash TEXT NOT NULL, adminKeyName TEXT NOT NULL,
                        csrf TEXT NOT NULL, expiresAt INTEGER NOT NULL) WITHOUT ROWID
                    """)
        }
        // What each device last reported of itself (header `TipSync-Context`, issue 73, item 4).
        migrator.registerMigration("v15-device-context") { db in
            try db.execute(sql: "ALTER TABLE device ADD COLUMN context TEXT")
        }
        return migrator
    }

    package func migrate() async throws {
        try Self.migrator.migrate(pool)
    }

    package func schemaVersion() async throws -> String {
        let applied = try await read { db in try Self.migrator.appliedMigrations(db) }
        return "SQLite schema \(applied.count) (\(applied.last ?? "empty"))"
    }

    package func createAccount(name: String) async throws -> Int64 {
        try await pool.write { db in
            if try Int64.fetchOne(db, sql: "SELECT id FROM account WHERE name = ?", arguments: [name]) != nil {
                throw StoreError("account '\(name)' already exists")
            }
            try db.execute(
                sql: "INSERT INTO account (name, createdAt) VALUES (?, ?)", arguments: [name, WallClock.milliseconds()])
            return db.lastInsertedRowID
        }
    }

    package func accountID(named name: String) async throws -> Int64? {
        try await read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM account WHERE name = ?", arguments: [name])
        }
    }

    package func accountName(id: Int64) async throws -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT name FROM account WHERE id = ?", arguments: [id])
        }
    }

    package func insertToken(hash: String, accountName: String, device: String, at now: Int64) async throws -> Bool {
        try await pool.write { db in
            guard
                let account = try Int64.fetchOne(
                    db, sql: "SELECT id FROM account WHERE name = ?", arguments: [accountName])
            else { return false }
            try db.execute(
                sql: "INSERT OR IGNORE INTO device (account, name) VALUES (?, ?)", arguments: [account, device])
            try db.execute(
                sql: "INSERT INTO token (hash, account, device, createdAt) VALUES (?, ?, ?, ?)",
                arguments: [hash, account, device, now])
            return true
        }
    }

    package func identity(forTokenHash hash: String) async throws -> DeviceIdentity? {
        try await read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT account, device FROM token WHERE hash = ?"), arguments: [hash]
            )
            .map { DeviceIdentity(accountID: $0["account"], device: $0["device"]) }
        }
    }

    /// Newest by row id, which SQLite hands out in insertion order: the table's b-tree read from its
    /// end (10 ms for 65,536 of a million tokens, where sorting by `createdAt` took 0.8 s).
    package func newestTokens(limit: Int) async throws -> [UnconfirmedToken] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT hash, account, device FROM token ORDER BY rowid DESC LIMIT ?",
                arguments: [limit]
            ).map {
                UnconfirmedToken(
                    hash: $0["hash"], identity: DeviceIdentity(accountID: $0["account"], device: $0["device"]))
            }
        }
    }

    package func wasErased(tokenHash hash: String) async throws -> Bool {
        try await read { db in
            try db.cachedStatement(sql: "SELECT 1 FROM erased_token WHERE hash = ?").hasRow(.text(hash), in: db)
        }
    }

    /// Throws ``UnconfirmedToken/Gone`` unless the token still names its device.
    package static func confirm(_ token: UnconfirmedToken, _ db: Database) throws {
        let names = try db.cachedStatement(sql: "SELECT 1 FROM token WHERE hash = ? AND account = ? AND device = ?")
            .hasRow(.text(token.hash), .integer(token.identity.accountID), .text(token.identity.device), in: db)
        guard names else { throw UnconfirmedToken.Gone() }
    }

    package func highestSeq(account: Int64, device: String) async throws -> Int64? {
        try await read { db in try Self.highestSeq(account: account, device: device, db) }
    }

    /// The device's highest stored seq, `nil` for a device the account does not have.
    package static func highestSeq(account: Int64, device: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT highestSeq FROM device WHERE account = ? AND name = ?"),
            arguments: [account, device])
    }

    package func push(_ pushed: PushedChanges, from identity: DeviceIdentity, confirming token: UnconfirmedToken?)
        async throws -> PushOutcome
    {
        try await pushes.write(Self.pushUpdates(pushed, from: identity, confirming: token))
    }

    /// A push's write: the token confirmed, the fresh changes appended at the account's next
    /// positions, the account's and the device's counters moved.
    package static func pushUpdates(
        _ pushed: PushedChanges, from identity: DeviceIdentity, confirming token: UnconfirmedToken?
    ) -> @Sendable (Database) throws -> PushOutcome {
        let (changes, bodies) = (pushed.changes, pushed.bodies)  // encoded outside the write lock
        return { db in
            if let token { try Self.confirm(token, db) }
            let counters = try Self.pushCounters(account: identity.accountID, device: identity.device, db)
            let plan = try PushPlan(changes, highestStored: counters.highestSeq)
            let (accepted, duplicates, highest) = (plan.fresh.count, plan.duplicates, plan.highestSeq)
            // The account's own position counter: cursors say nothing about other accounts.
            var position = counters.nextPosition
            let insert = try db.cachedStatement(
                sql: "INSERT INTO change (account, position, device, seq, hlc, kind, body) VALUES (?, ?, ?, ?, ?, ?, ?)"
            )
            for index in plan.freshIndices {
                let change = changes[index]
                position += 1
                try insert.run(
                    .integer(identity.accountID), .integer(position), .text(identity.device), .integer(change.seq),
                    .integer(change.hlc.rawValue), .text(change.kind.rawValue),
                    .text(bodies[index]), in: db)
            }
            if accepted > 0 {
                try db.cachedStatement(sql: "UPDATE account SET nextPosition = ? WHERE id = ?")
                    .run(.integer(position), .integer(identity.accountID), in: db)
                try db.cachedStatement(sql: "UPDATE device SET highestSeq = ? WHERE account = ? AND name = ?")
                    .run(.integer(highest), .integer(identity.accountID), .text(identity.device), in: db)
            }
            let generation = counters.generation
            guard accepted > 0 else {
                return PushOutcome(accepted: 0, duplicates: duplicates, highestSeq: highest, generation: generation)
            }
            return PushOutcome(
                accepted: accepted, duplicates: duplicates, highestSeq: highest,
                entriesSinceCompaction: position - counters.compactedAtPosition, generation: generation,
                appended: AppendedEntries(
                    first: position - Int64(accepted) + 1, bodies: plan.freshIndices.map { bodies[$0] }))
        }
    }

    /// What a push reads before it writes, in one statement: the account's position counter and
    /// where it was last compacted, the device's highest stored seq (0 for none) and the cursor
    /// generation. An account the database does not have reads as all zeros.
    package static func pushCounters(account: Int64, device: String, _ db: Database) throws -> (
        nextPosition: Int64, compactedAtPosition: Int64, highestSeq: Int64, generation: String
    ) {
        let statement = try db.cachedStatement(
            sql: """
                SELECT nextPosition, compactedAtPosition,
                    (SELECT highestSeq FROM device WHERE device.account = account.id AND name = ?),
                    (SELECT value FROM server_meta WHERE key = 'cursorGeneration')
                FROM account WHERE id = ?
                """)
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        try statement.bind([.text(device), .integer(account)], in: db)
        let code = sqlite3_step(handle)
        guard code == SQLITE_ROW else {
            guard code == SQLITE_DONE else { throw Self.error(code, statement, db) }
            return (0, 0, 0, try cursorGeneration(db))
        }
        let generation = sqlite3_column_text(handle, 3).map { String(cString: $0) } ?? ""
        return (
            sqlite3_column_int64(handle, 0), sqlite3_column_int64(handle, 1), sqlite3_column_int64(handle, 2),
            generation
        )
    }

    package func pull(
        account: Int64, after cursor: Int64, limit: Int, device: String?, confirming token: UnconfirmedToken?,
        keptPages: Bool
    ) async throws -> PullPage {
        try await read { db in
            if let token { try Self.confirm(token, db) }
            let counters = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT compactedThrough, nextPosition, compactedAtPosition FROM account WHERE id = ?"),
                arguments: [account])
            let compactedThrough: Int64 = counters?["compactedThrough"] ?? 0
            // The highest position handed out for this account (a restored backup rewinds it).
            let lastHandedOut: Int64 = counters?["nextPosition"] ?? 0
            let compactedAt: Int64 = counters?["compactedAtPosition"] ?? 0
            let snapshot = PullPage.isSnapshot(cursor: cursor, compactedThrough: compactedThrough)
            let deviceHighestSeq = try device.map { try Self.highestSeq(account: account, device: $0, db) ?? 0 }
            // Kept pages are looked up only for a device behind the latest compaction (a new one, or
            // one far behind): a device at the log's end costs no lookup. A kept page that starts past
            // the compaction (entries pushed after it, then compacted nowhere) is read from the log.
            if keptPages, cursor < compactedAt,
                let kept = try Self.keptPage(account: account, after: cursor, builtFor: compactedAt, db),
                kept.answers(limit: limit)
            {
                return PullPage(
                    changes: ChangeTexts(), cursor: kept.last, more: true, snapshot: snapshot,
                    logEnd: max(lastHandedOut, compactedThrough), generation: try Self.cursorGeneration(db),
                    deviceHighestSeq: deviceHighestSeq, kept: kept)
            }
            let (changes, last, more) = try Self.readPage(account: account, after: cursor, limit: limit, db)
            return PullPage(
                changes: changes, cursor: last ?? cursor, more: more, snapshot: snapshot,
                logEnd: max(lastHandedOut, compactedThrough), generation: try Self.cursorGeneration(db),
                deviceHighestSeq: deviceHighestSeq)
        }
    }

    /// Up to `limit` entries after `cursor` (and ``ChangeTexts/maxPageBytes``), in log order: their
    /// texts, the last one's position (nil: none), and whether more follow. Stepped through SQLite itself, each text copied once from
    /// SQLite's row into the page (a cold start's pages hold 5,000 entries; a `Row` made a string
    /// of each, measured at a tenth of the server's work on a page).
    package static func readPage(account: Int64, after cursor: Int64, limit: Int, _ db: Database) throws -> (
        ChangeTexts, last: Int64?, more: Bool
    ) {
        let statement = try db.cachedStatement(
            sql: "SELECT position, body FROM change WHERE account = ? AND position > ? ORDER BY position LIMIT ?")
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        for (index, value) in [account, cursor, Int64(limit) + 1].enumerated() {
            let code = sqlite3_bind_int64(handle, Int32(index + 1), value)
            guard code == SQLITE_OK else { throw Self.error(code, statement, db) }
        }
        var changes = ChangeTexts()
        var last: Int64?
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return (changes, last, false) }
            guard code == SQLITE_ROW else { throw Self.error(code, statement, db) }
            // The text first, then its length (SQLite's documented order); a stored body is never NULL.
            let text = sqlite3_column_text(handle, 1)
            let length = text == nil ? 0 : Int(sqlite3_column_bytes(handle, 1))
            guard changes.admits(length, limit: limit) else { return (changes, last, true) }
            last = sqlite3_column_int64(handle, 0)
            changes.append(UnsafeRawBufferPointer(start: text, count: length))
        }
    }

    private static func error(_ code: Int32, _ statement: Statement, _ db: Database) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
    }

    package static func cursorGeneration(_ db: Database) throws -> String {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM server_meta WHERE key = 'cursorGeneration'"))
            ?? ""
    }

    package func cursorGeneration() async throws -> String {
        try await read { db in try Self.cursorGeneration(db) }
    }

    package func rotateCursorGeneration() async throws -> String {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE server_meta SET value = lower(hex(randomblob(8))) WHERE key = 'cursorGeneration'")
            return try Self.cursorGeneration(db)
        }
    }

    package func logEntries(account: Int64) async throws -> [LogCompaction.Entry] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT position, body FROM change WHERE account = ? ORDER BY position", arguments: [account]
            ).map { row in
                LogCompaction.Entry(
                    position: row["position"],
                    change: try JSONCoding.decode(Change.self, from: (row["body"] as String).utf8))
            }
        }
    }

    package func dropCompacted(_ positions: [Int64], account: Int64, through: Int64, expecting expected: Int)
        async throws -> Bool
    {
        try await pool.write { db in
            let count =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM change WHERE account = ? AND position <= ?",
                    arguments: [account, through]) ?? 0
            guard count == expected else { return false }
            if !positions.isEmpty {
                let placeholders = Array(repeating: "?", count: positions.count).joined(separator: ",")
                try db.execute(
                    sql: "DELETE FROM change WHERE account = ? AND position IN (\(placeholders))",
                    arguments: StatementArguments([account] + positions))
            }
            try db.execute(
                sql: """
                    UPDATE account SET compactedThrough = MAX(compactedThrough, ?), compactedAt = ?,
                        compactedAtPosition = MAX(compactedAtPosition, ?)
                    WHERE id = ?
                    """, arguments: [positions.max() ?? 0, WallClock.milliseconds(), through, account])
            return true
        }
    }

    /// Copies the whole database to `path` with SQLite's online backup API (the server may keep
    /// serving); what `sqlite3 server.sqlite ".backup PATH"` does.
    package func backup(to path: String) throws {
        try pool.backup(to: try DatabaseQueue(path: path))
    }

    package func logCount(account: Int64) async throws -> Int {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM change WHERE account = ?", arguments: [account]) ?? 0
        }
    }
}
