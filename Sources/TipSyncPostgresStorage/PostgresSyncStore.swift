import Foundation
package import Logging
package import PostgresNIO
package import TipSyncCore
package import TipSyncServerBasics
package import TipSyncStorage

/// ``SyncStore`` on PostgreSQL: several server instances may share one database.
///
/// Cursors stay correct with concurrent writers: a push takes its account's row lock (`FOR UPDATE`)
/// to draw positions from the account's counter and holds it until commit, so an account's
/// positions become visible in order — a reader can never see position N+1 committed while N is
/// still in flight. A push also locks its device's row, so a retried push arriving at two instances
/// at once is still applied once. Every commit that adds changes sends `NOTIFY tipsync_changes`
/// with the account id, which every instance `LISTEN`s to (``watchChanges(_:)``), so devices live-
/// connected to one instance learn of pushes accepted by another within milliseconds.
///
/// The client's connection pool must be running (``PostgresClient/run()``) while the store is used;
/// `DatabaseLocation.withStore` (the composition root) does that.
package struct PostgresSyncStore: SyncStore {
    package let client: PostgresClient
    package let logger: Logger
    package static let channel = "tipsync_changes"
    /// Serializes migrations of concurrently starting instances (`pg_advisory_xact_lock` key).
    package static let migrationLockKey: Int64 = 0x7469_7073_796e_63

    package init(client: PostgresClient, logger: Logger = Logger(label: "tipsync-server.postgres")) {
        self.client = client
        self.logger = logger
    }

    /// A client for `postgres://user:password@host:port/database[?sslmode=disable|prefer|require]`.
    package static func makeClient(url text: String) throws -> PostgresClient {
        let url = try PostgresURL(text)
        let tls: PostgresClient.Configuration.TLS =
            switch url.tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
        let configuration = PostgresClient.Configuration(
            host: url.host, port: url.port, username: url.username, password: url.password, database: url.database,
            tls: tls)
        return PostgresClient(configuration: configuration)
    }

    /// Runs a connection pool for `url`, waits up to `waiting` for the database to answer (retrying
    /// with a logged backoff), migrates it, and runs `body` with the store; the pool runs for exactly
    /// that long.
    package static func withMigratedStore<Result: Sendable>(
        url: String, waiting: Duration, logger: Logger, _ body: (any SyncStore) async throws -> Result
    ) async throws -> Result {
        let address = try PostgresURL(url)
        let client = try makeClient(url: url)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await PostgresReachability.waitUntilReachable(
                client, host: address.host, port: address.port, within: waiting, logger: logger)
            let store = PostgresSyncStore(client: client, logger: logger)
            try await store.migrate()
            return try await body(store)
        }
    }

    /// One transaction; a failure inside it (a sequence gap, a taken name) is rethrown as itself.
    package func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws
        -> Result
    {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError { throw closureError }
            throw error
        }
    }

    // MARK: Schema

    /// Migrations by version; each runs in the transaction that records it. Plain SQL only.
    package static let migrations: [(version: Int, sql: [String])] = [
        (
            1,
            [
                """
                CREATE TABLE account (
                    id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE,
                    compacted_through BIGINT NOT NULL DEFAULT 0, next_position BIGINT NOT NULL DEFAULT 0)
                """,
                """
                CREATE TABLE device (
                    account BIGINT NOT NULL REFERENCES account(id), name TEXT NOT NULL,
                    highest_seq BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (account, name))
                """,
                """
                CREATE TABLE token (
                    hash TEXT PRIMARY KEY, account BIGINT NOT NULL, device TEXT NOT NULL,
                    FOREIGN KEY (account, device) REFERENCES device(account, name))
                """,
                """
                CREATE TABLE change (
                    account BIGINT NOT NULL, position BIGINT NOT NULL, device TEXT NOT NULL, seq BIGINT NOT NULL,
                    hlc BIGINT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
                    PRIMARY KEY (account, position), UNIQUE (account, device, seq))
                """,
            ]
        ),
        (
            2,
            [
                "CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                """
                INSERT INTO server_meta (key, value)
                VALUES ('cursorGeneration', substr(md5(random()::text || clock_timestamp()::text), 1, 16))
                """,
            ]
        ),
        (
            3,
            [
                "ALTER TABLE account ADD COLUMN created_at BIGINT",
                "ALTER TABLE account ADD COLUMN compacted_at BIGINT",
                "ALTER TABLE account ADD COLUMN compacted_at_position BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE device ADD COLUMN last_seen BIGINT",
                "ALTER TABLE device ADD COLUMN revoked_at BIGINT",
                "ALTER TABLE token ADD COLUMN created_at BIGINT",
                "CREATE INDEX token_by_device ON token (account, device)",
                "CREATE TABLE admin_key (hash TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at BIGINT NOT NULL)",
                "CREATE TABLE erased_account (name_hash TEXT PRIMARY KEY, erased_at BIGINT NOT NULL)",
            ]
        ),
        (
            4,
            [
                "ALTER TABLE account ADD COLUMN tip_usage_through BIGINT NOT NULL DEFAULT 0",
                """
                CREATE TABLE tip_usage (
                    account BIGINT NOT NULL, tip TEXT NOT NULL, reason TEXT, displays BIGINT NOT NULL,
                    first_display_at BIGINT, invalidated_at BIGINT, PRIMARY KEY (account, tip))
                """,
                "CREATE INDEX tip_usage_by_tip ON tip_usage (tip)",
                "CREATE INDEX account_by_compaction ON account (compacted_at)",
            ]
        ),
        (
            5,
            [
                """
                CREATE TABLE tip_counter (
                    tip TEXT NOT NULL, name TEXT NOT NULL, count BIGINT NOT NULL, PRIMARY KEY (tip, name))
                """,
                "DELETE FROM tip_usage",
                "UPDATE account SET tip_usage_through = 0",
            ]
        ),
        (6, ["ALTER TABLE device ADD COLUMN pulled_through BIGINT"]),
        // Tip usage counts the catalog's display limits and keeps daily series: derived again.
        (7, ["DELETE FROM tip_usage", "DELETE FROM tip_counter", "UPDATE account SET tip_usage_through = 0"]),
        // Every uploaded catalog is kept (versions, diffs, restore); the current one becomes version 1.
        (
            8,
            [
                """
                CREATE TABLE catalog_version (
                    version BIGSERIAL PRIMARY KEY, text TEXT NOT NULL, uploaded_by TEXT NOT NULL,
                    uploaded_at BIGINT NOT NULL, restored_from BIGINT)
                """,
                """
                INSERT INTO catalog_version (text, uploaded_by, uploaded_at)
                SELECT value, 'before versions', 0 FROM server_meta WHERE key = 'catalog'
                """,
            ]
        ),
        // Each account's participation in a tip's experiment (protocol.md §13.12) beside its tip
        // usage: derived again for every account.
        (
            9,
            [
                "ALTER TABLE tip_usage ADD COLUMN experiment TEXT",
                "ALTER TABLE tip_usage ADD COLUMN arm TEXT",
                "ALTER TABLE tip_usage ADD COLUMN reached_at BIGINT",
                "ALTER TABLE tip_usage ADD COLUMN exposed_at BIGINT",
                "ALTER TABLE tip_usage ADD COLUMN converted_at BIGINT",
                "CREATE INDEX tip_usage_by_experiment ON tip_usage (experiment) WHERE experiment IS NOT NULL",
                "DELETE FROM tip_usage", "DELETE FROM tip_counter", "UPDATE account SET tip_usage_through = 0",
            ]
        ),
        // Pages of each compacted account's state, kept compressed for new devices (KeptStatePage).
        (
            10,
            [
                """
                CREATE TABLE kept_state_page (
                    account BIGINT NOT NULL, after_position BIGINT NOT NULL, built_for BIGINT NOT NULL,
                    last_position BIGINT NOT NULL, count INTEGER NOT NULL, ended_by_bytes BOOLEAN NOT NULL,
                    length INTEGER NOT NULL, crc32 BIGINT NOT NULL, adler32 BIGINT NOT NULL, bytes BYTEA NOT NULL,
                    PRIMARY KEY (account, after_position))
                """
            ]
        ),
        // The hashes of erased accounts' device tokens: their devices are told `account_erased`.
        (11, ["CREATE TABLE erased_token (hash TEXT PRIMARY KEY, erased_at BIGINT NOT NULL)"]),
        // Console login sessions, seen by every instance (issue 73, item 9).
        (
            12,
            [
                """
                CREATE TABLE console_session (
                    id_hash TEXT PRIMARY KEY, admin_key_hash TEXT NOT NULL, admin_key_name TEXT NOT NULL,
                    csrf TEXT NOT NULL, expires_at BIGINT NOT NULL)
                """
            ]
        ),
        // What each device last reported of itself (header `TipSync-Context`, issue 73, item 4).
        (13, ["ALTER TABLE device ADD COLUMN context TEXT"]),
    ]

    /// Creates or upgrades the schema. Concurrent instances wait for each other (advisory lock), so
    /// migrations run exactly once.
    package func schemaVersion() async throws -> String {
        var current = 0
        for try await version in try await client.query(
            "SELECT COALESCE(MAX(version), 0) FROM tipsync_schema_version", logger: logger
        ).decode(Int.self) {
            current = version
        }
        return "PostgreSQL schema \(current)"
    }

    package func migrate() async throws {
        try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLockKey))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS tipsync_schema_version (version INTEGER NOT NULL)", logger: logger)
            var current = 0
            for try await version in try await connection.query(
                "SELECT COALESCE(MAX(version), 0) FROM tipsync_schema_version", logger: logger
            ).decode(Int.self) {
                current = version
            }
            for migration in Self.migrations where migration.version > current {
                for statement in migration.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO tipsync_schema_version (version) VALUES (\(migration.version))", logger: logger)
            }
        }
    }

    // MARK: Accounts and tokens

    package func createAccount(name: String) async throws -> Int64 {
        try await transaction { connection in
            let rows = try await connection.query(
                "INSERT INTO account (name, created_at) VALUES (\(name), \(WallClock.milliseconds())) ON CONFLICT (name) DO NOTHING RETURNING id",
                logger: logger
            )
            for try await id in rows.decode(Int64.self) { return id }
            throw StoreError("account '\(name)' already exists")
        }
    }

    package func accountName(id: Int64) async throws -> String? {
        let rows = try await client.query("SELECT name FROM account WHERE id = \(id)", logger: logger)
        for try await name in rows.decode(String.self) { return name }
        return nil
    }

    package func accountID(named name: String) async throws -> Int64? {
        try await transaction { connection in
            for try await id in try await connection.query(
                "SELECT id FROM account WHERE name = \(name)", logger: logger
            ).decode(Int64.self) {
                return id
            }
            return nil
        }
    }

    package func insertToken(hash: String, accountName: String, device: String, at now: Int64) async throws -> Bool {
        try await transaction { connection in
            guard
                let account = try await rows(
                    "SELECT id FROM account WHERE name = \(accountName)", as: Int64.self, on: connection
                ).first
            else { return false }
            try await connection.query(
                "INSERT INTO device (account, name) VALUES (\(account), \(device)) ON CONFLICT DO NOTHING",
                logger: logger)
            try await connection.query(
                "INSERT INTO token (hash, account, device, created_at) VALUES (\(hash), \(account), \(device), \(now))",
                logger: logger)
            return true
        }
    }

    /// Every request with a token this instance has not seen yet (after a restart: every device's
    /// first) reads it here; prepared once per connection (``PostgresTokenStatement``).
    package func identity(forTokenHash hash: String) async throws -> DeviceIdentity? {
        var identity: DeviceIdentity?
        for try await row in try await client.execute(PostgresTokenStatement(hash: hash), logger: logger) {
            identity = DeviceIdentity(accountID: row.account, device: row.device)
        }
        return identity
    }

    package func newestTokens(limit: Int) async throws -> [UnconfirmedToken] {
        let rows = try await client.query(
            "SELECT hash, account, device FROM token ORDER BY created_at DESC NULLS LAST LIMIT \(limit)", logger: logger
        )
        var tokens: [UnconfirmedToken] = []
        for try await (hash, account, device) in rows.decode((String, Int64, String).self) {
            tokens.append(UnconfirmedToken(hash: hash, identity: DeviceIdentity(accountID: account, device: device)))
        }
        return tokens
    }

    package func wasErased(tokenHash hash: String) async throws -> Bool {
        let rows = try await client.query("SELECT 1 FROM erased_token WHERE hash = \(hash)", logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }

    package func highestSeq(account: Int64, device: String) async throws -> Int64? {
        let rows = try await client.query(
            "SELECT highest_seq FROM device WHERE account = \(account) AND name = \(device)", logger: logger)
        for try await seq in rows.decode(Int64.self) { return seq }
        return nil
    }

    // MARK: Log

    package func push(_ pushed: PushedChanges, from identity: DeviceIdentity, confirming token: UnconfirmedToken?)
        async throws -> PushOutcome
    {
        let changes = pushed.changes
        let account = identity.accountID
        let device = identity.device
        func append(_ plan: PushPlan, on highest: Int64, confirming tokenHash: String?) -> PostgresPushStatements.Append
        {
            PostgresPushStatements.Append(
                account: account, device: device, seqs: plan.fresh.map(\.seq), hlcs: plan.fresh.map(\.hlc.rawValue),
                kinds: plan.fresh.map(\.kind.rawValue), bodies: plan.freshIndices.map { pushed.bodies[$0] },
                highestSeq: plan.highestSeq, channel: Self.channel, expectedHighest: highest, tokenHash: tokenHash)
        }
        func outcome(
            _ plan: PushPlan, _ statement: PostgresPushStatements.Append, end: Int64, compactedAt: Int64,
            generation: String?
        )
            -> PushOutcome
        {
            PushOutcome(
                accepted: plan.fresh.count, duplicates: plan.duplicates, highestSeq: plan.highestSeq,
                entriesSinceCompaction: end - compactedAt, generation: generation,
                appended: AppendedEntries(first: end - Int64(plan.fresh.count) + 1, bodies: statement.bodies))
        }
        // A push is bound by its round trips to PostgreSQL, not by its work. Most pushes continue
        // their device's log: planned as if the device's highest stored seq were just below the first
        // change's, they are one statement that stores them only if it is, and if a remembered token
        // still names the device (one round trip). Any other push — a retry, a gap, a revoked token —
        // is planned under the device's lock, as every push once was: ``PostgresPushStatements/LockDevice``
        // then the same append in a transaction (four round trips with BEGIN and COMMIT). Either way the plan is ``PushPlan``'s
        // over the device's real highest seq.
        if let first = changes.first,
            let plan = try? PushPlan(changes, highestStored: first.seq &- 1)
        {
            let statement = append(plan, on: first.seq &- 1, confirming: token?.hash)
            var stored: PostgresPushStatements.Append.Row?
            for try await row in try await client.execute(statement, logger: logger) { stored = row }
            if let stored {
                return outcome(
                    plan, statement, end: stored.nextPosition, compactedAt: stored.compactedAtPosition,
                    generation: stored.generation)
            }
        }
        return try await transaction { connection in
            var highest: Int64 = 0
            var generation: String?
            var confirmed = false
            for try await row in try await connection.execute(
                PostgresPushStatements.LockDevice(account: account, device: device, tokenHash: token?.hash ?? ""),
                logger: logger)
            {
                (highest, generation, confirmed) = (row.highestSeq ?? 0, row.generation, row.tokenConfirmed)
            }
            if token != nil, !confirmed { throw UnconfirmedToken.Gone() }
            let plan = try PushPlan(changes, highestStored: highest)
            guard !plan.fresh.isEmpty else {
                return PushOutcome(
                    accepted: 0, duplicates: plan.duplicates, highestSeq: highest, generation: generation)
            }
            // The device's row is locked: the seq just read still holds, unless the row is gone.
            let statement = append(plan, on: highest, confirming: nil)
            var stored: PostgresPushStatements.Append.Row?
            for try await row in try await connection.execute(statement, logger: logger) { stored = row }
            guard let stored else { throw StoreError("device '\(device)' no longer exists; nothing was stored") }
            return outcome(
                plan, statement, end: stored.nextPosition, compactedAt: stored.compactedAtPosition,
                generation: generation
            )
        }
    }

    package func pull(
        account: Int64, after cursor: Int64, limit: Int, device: String?, confirming token: UnconfirmedToken?,
        keptPages: Bool
    ) async throws -> PullPage {
        // One prepared statement: one round trip, one snapshot (``PostgresPullStatement``).
        let fetch = limit + 1
        var head: (compactedThrough: Int64, logEnd: Int64, generation: String, confirmed: Bool, highest: Int64?)?
        var kept: KeptStatePage?
        var rows: [(position: Int64, body: ByteBuffer)] = []
        rows.reserveCapacity(min(fetch, 1024))
        for try await row in try await client.execute(
            PostgresPullStatement(
                account: account, tokenHash: token?.hash ?? "", tokenAccount: token?.identity.accountID ?? 0,
                tokenDevice: token?.identity.device ?? "", device: device ?? "", after: cursor, fetch: Int64(fetch),
                keptPages: keptPages),
            logger: logger)
        {
            if head == nil {
                head = (
                    row.compactedThrough ?? 0, row.logEnd ?? 0, row.generation ?? "", row.tokenConfirmed, row.highestSeq
                )
                kept = row.kept(after: cursor)
            }
            guard let position = row.position else { continue }
            guard let body = row.body else { throw StoreError("a change's body is NULL") }
            rows.append((position, body))
        }
        guard let head else { throw StoreError("the pull's statement returned no row") }
        if token != nil, !head.confirmed { throw UnconfirmedToken.Gone() }
        if let kept {
            // The statement read no entries beside a kept page: it answers the pull, or the log is read.
            guard kept.answers(limit: limit) else {
                return try await pull(
                    account: account, after: cursor, limit: limit, device: device, confirming: token, keptPages: false)
            }
            return PullPage(
                changes: ChangeTexts(), cursor: kept.last, more: true,
                snapshot: PullPage.isSnapshot(cursor: cursor, compactedThrough: head.compactedThrough),
                logEnd: head.logEnd, generation: head.generation,
                deviceHighestSeq: device.map { _ in head.highest ?? 0 }, kept: kept)
        }
        // The join hands the page's rows over in the order it read them; SQL promises no order.
        if !zip(rows, rows.dropFirst()).allSatisfy({ $0.position < $1.position }) {
            rows.sort { $0.position < $1.position }
        }
        var changes = ChangeTexts()
        var last: Int64?
        for row in rows {
            guard changes.admits(row.body.readableBytes, limit: limit) else { break }
            changes.append(row.body)
            last = row.position
        }
        let more = changes.count < rows.count
        return PullPage(
            changes: changes, cursor: last ?? cursor, more: more,
            snapshot: PullPage.isSnapshot(cursor: cursor, compactedThrough: head.compactedThrough),
            logEnd: head.logEnd, generation: head.generation,
            deviceHighestSeq: device.map { _ in head.highest ?? 0 })
    }

    package static func cursorGeneration(_ connection: PostgresConnection, logger: Logger) async throws -> String {
        var generation = ""
        for try await value in try await connection.query(
            "SELECT value FROM server_meta WHERE key = 'cursorGeneration'", logger: logger
        ).decode(String.self) {
            generation = value
        }
        return generation
    }

    package func cursorGeneration() async throws -> String {
        try await client.withConnection { try await Self.cursorGeneration($0, logger: logger) }
    }

    package func rotateCursorGeneration() async throws -> String {
        try await transaction { connection in
            try await connection.query(
                "UPDATE server_meta SET value = substr(md5(random()::text || clock_timestamp()::text), 1, 16) WHERE key = 'cursorGeneration'",
                logger: logger)
            return try await Self.cursorGeneration(connection, logger: logger)
        }
    }

    package func logEntries(account: Int64) async throws -> [LogCompaction.Entry] {
        var entries: [LogCompaction.Entry] = []
        for try await (position, body) in try await client.query(
            "SELECT position, body FROM change WHERE account = \(account) ORDER BY position", logger: logger
        ).decode((Int64, String).self) {
            entries.append(
                LogCompaction.Entry(position: position, change: try JSONCoding.decode(Change.self, from: body.utf8)))
        }
        return entries
    }

    package func dropCompacted(_ positions: [Int64], account: Int64, through: Int64, expecting expected: Int)
        async throws -> Bool
    {
        try await transaction { connection -> Bool in
            // The account row lock: pushes to this account wait for this delete only.
            try await connection.query("SELECT id FROM account WHERE id = \(account) FOR UPDATE", logger: logger)
            let count =
                try await rows(
                    "SELECT COUNT(*) FROM change WHERE account = \(account) AND position <= \(through)",
                    as: Int64.self, on: connection
                ).first ?? 0
            guard count == Int64(expected) else { return false }
            if !positions.isEmpty {
                try await connection.query(
                    "DELETE FROM change WHERE account = \(account) AND position = ANY(\(positions)::BIGINT[])",
                    logger: logger)
            }
            try await connection.query(
                """
                UPDATE account SET compacted_through = GREATEST(compacted_through, \(positions.max() ?? 0)),
                    compacted_at = \(WallClock.milliseconds()),
                    compacted_at_position = GREATEST(compacted_at_position, \(through))
                WHERE id = \(account)
                """, logger: logger)
            return true
        }
    }

    package func logCount(account: Int64) async throws -> Int {
        let rows = try await client.query("SELECT COUNT(*) FROM change WHERE account = \(account)", logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// Calls `onChange` with every event any instance announces (every push commit among them),
    /// until cancelled.
    package func watchChanges(_ onChange: @escaping @Sendable (StoreEvent) -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: Self.channel) { notifications in
                onChange(.watching)  // LISTEN is in place from here on
                for try await notification in notifications {
                    if let event = StoreEvent(payload: notification.payload) { onChange(event) }
                }
            }
        }
    }
}
