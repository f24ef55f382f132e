package import PostgresNIO
package import TipSyncServerBasics
package import TipSyncStorage

extension PostgresSyncStore {
    /// The rows of a query, decoded; for queries whose results are small.
    package func rows<Row: Sendable>(
        _ query: PostgresQuery, as type: Row.Type = Row.self, on connection: PostgresConnection
    ) async throws -> [Row] where Row: PostgresDecodable {
        var result: [Row] = []
        for try await row in try await connection.query(query, logger: logger).decode(Row.self) { result.append(row) }
        return result
    }

    package func ensureAccount(name: String, at now: Int64) async throws -> (id: Int64, created: Bool) {
        try await transaction { connection in
            for try await id in try await connection.query(
                "INSERT INTO account (name, created_at) VALUES (\(name), \(now)) ON CONFLICT (name) DO NOTHING RETURNING id",
                logger: logger
            ).decode(Int64.self) {
                return (id, true)
            }
            for try await id in try await connection.query(
                "SELECT id FROM account WHERE name = \(name)", logger: logger
            ).decode(Int64.self) {
                return (id, false)
            }
            throw StoreError("account '\(name)' could not be created")
        }
    }

    package func accounts(after: String?, limit: Int) async throws -> [AccountSummary] {
        let after = after ?? ""
        // COLLATE "C": byte order of the UTF-8 encoding, the order protocol.md names, whatever the
        // database's locale.
        let rows = try await client.query(
            """
            SELECT name, created_at,
                (SELECT COUNT(*) FROM device WHERE device.account = account.id),
                (SELECT COUNT(*) FROM change WHERE change.account = account.id)
            FROM account WHERE name COLLATE "C" > \(after) ORDER BY name COLLATE "C" LIMIT \(limit)
            """, logger: logger)
        var accounts: [AccountSummary] = []
        for try await (name, createdAt, devices, entries) in rows.decode((String, Int64?, Int64, Int64).self) {
            accounts.append(
                AccountSummary(name: name, createdAt: createdAt, devices: Int(devices), logEntries: Int(entries)))
        }
        return accounts
    }

    package func quietDevices(seenBefore: Int64, limit: Int) async throws -> [QuietDevice] {
        let rows = try await client.query(
            """
            SELECT account.name, device.name, device.last_seen
            FROM device JOIN account ON account.id = device.account
            WHERE device.last_seen IS NULL OR device.last_seen < \(seenBefore)
            ORDER BY COALESCE(device.last_seen, 0), account.name COLLATE "C", device.name COLLATE "C" LIMIT \(limit)
            """, logger: logger)
        var devices: [QuietDevice] = []
        for try await (account, device, lastSeen) in rows.decode((String, String, Int64?).self) {
            devices.append(QuietDevice(account: account, device: device, lastSeen: lastSeen))
        }
        return devices
    }

    package func accountDetails(name: String) async throws -> AccountDetails? {
        try await transaction { connection in
            var found: (Int64, Int64?, Int64, Int64, Int64?, Int64)?
            for try await row in try await connection.query(
                """
                SELECT id, created_at, next_position, compacted_through, compacted_at, compacted_at_position
                FROM account WHERE name = \(name)
                """, logger: logger
            ).decode((Int64, Int64?, Int64, Int64, Int64?, Int64).self) {
                found = row
            }
            guard let (id, createdAt, logEnd, compactedThrough, compactedAt, compactedAtPosition) = found else {
                return nil
            }
            var devices: [DeviceDetails] = []
            for try await (device, highest, lastSeen, revokedAt, tokens, pulled, context) in try await connection.query(
                """
                SELECT name, highest_seq, last_seen, revoked_at,
                    (SELECT COUNT(*) FROM token WHERE token.account = device.account AND token.device = device.name),
                    pulled_through, context
                FROM device WHERE account = \(id) ORDER BY name COLLATE "C"
                """, logger: logger
            ).decode((String, Int64, Int64?, Int64?, Int64, Int64?, String?).self) {
                devices.append(
                    DeviceDetails(
                        name: device, highestSeq: highest, lastSeen: lastSeen, tokens: Int(tokens),
                        revokedAt: revokedAt, pulledThrough: pulled, context: context))
            }
            let entries =
                try await rows(
                    "SELECT COUNT(*) FROM change WHERE account = \(id)", as: Int64.self, on: connection
                ).first ?? 0
            return AccountDetails(
                name: name, createdAt: createdAt, logEntries: Int(entries), logEnd: logEnd,
                compactedThrough: compactedThrough, lastCompactionAt: compactedAt,
                entriesSinceCompaction: logEnd - compactedAtPosition, devices: devices)
        }
    }

    package func eraseAccount(name: String, at now: Int64) async throws -> (id: Int64, logEntries: Int)? {
        let erased = try await transaction { connection -> (id: Int64, logEntries: Int)? in
            // The account's row lock: a concurrent push to it waits, then finds no device.
            guard
                let id = try await rows(
                    "SELECT id FROM account WHERE name = \(name) FOR UPDATE", as: Int64.self, on: connection
                ).first
            else { return nil }
            let entries =
                try await rows(
                    "WITH gone AS (DELETE FROM change WHERE account = \(id) RETURNING 1) SELECT COUNT(*) FROM gone",
                    as: Int64.self, on: connection
                ).first ?? 0
            try await connection.query("DELETE FROM kept_state_page WHERE account = \(id)", logger: logger)
            try await connection.query(
                """
                INSERT INTO erased_token (hash, erased_at) SELECT hash, \(now) FROM token WHERE account = \(id)
                ON CONFLICT (hash) DO NOTHING
                """, logger: logger)
            try await connection.query("DELETE FROM token WHERE account = \(id)", logger: logger)
            try await connection.query("DELETE FROM device WHERE account = \(id)", logger: logger)
            try await apply(
                TipUsageCounters.deltas(replacing: try await tipUsage(account: id, on: connection), with: []),
                on: connection)
            try await connection.query("DELETE FROM tip_usage WHERE account = \(id)", logger: logger)
            try await connection.query("DELETE FROM account WHERE id = \(id)", logger: logger)
            let nameHash = TokenHasher.hash(name)
            try await connection.query(
                """
                INSERT INTO erased_account (name_hash, erased_at) VALUES (\(nameHash), \(now))
                ON CONFLICT (name_hash) DO UPDATE SET erased_at = GREATEST(erased_account.erased_at, EXCLUDED.erased_at)
                """, logger: logger)
            try await connection.query(
                "SELECT pg_notify(\(Self.channel), \(StoreEvent.erased(account: id).payload))", logger: logger)
            return (id, Int(entries))
        }
        return erased
    }

    package func revokeTokens(accountName: String, device: String, at now: Int64) async throws -> (
        account: Int64, tokens: Int
    )? {
        try await transaction { connection in
            guard
                let account = try await rows(
                    """
                    UPDATE device SET revoked_at = GREATEST(COALESCE(revoked_at, 0), \(now))
                    FROM account WHERE account.id = device.account AND account.name = \(accountName)
                        AND device.name = \(device)
                    RETURNING device.account
                    """, as: Int64.self, on: connection
                ).first
            else { return nil }
            let tokens =
                try await rows(
                    """
                    WITH gone AS (DELETE FROM token WHERE account = \(account) AND device = \(device) RETURNING 1)
                    SELECT COUNT(*) FROM gone
                    """, as: Int64.self, on: connection
                ).first ?? 0
            // Every instance ends the device's open streams when (and only if) this commits.
            try await connection.query(
                "SELECT pg_notify(\(Self.channel), \(StoreEvent.revoked(account: account, device: device).payload))",
                logger: logger)
            return (account, Int(tokens))
        }
    }

    package func recordPulled(_ pulled: [DeviceIdentity: Int64]) async throws {
        guard !pulled.isEmpty else { return }
        let keys = Array(pulled.keys)
        try await client.query(
            """
            UPDATE device SET pulled_through = pulled.p
            FROM UNNEST(\(keys.map(\.accountID))::BIGINT[], \(keys.map(\.device))::TEXT[],
                \(keys.map { pulled[$0]! })::BIGINT[]) AS pulled(a, d, p)
            WHERE device.account = pulled.a AND device.name = pulled.d
            """, logger: logger)
    }

    package func recordSeen(_ seen: [DeviceIdentity: Int64]) async throws {
        guard !seen.isEmpty else { return }
        let accounts = seen.keys.map(\.accountID)
        let devices = seen.keys.map(\.device)
        let times = seen.keys.map { seen[$0]! }
        try await client.query(
            """
            UPDATE device SET last_seen = GREATEST(COALESCE(device.last_seen, 0), seen.t)
            FROM UNNEST(\(accounts)::BIGINT[], \(devices)::TEXT[], \(times)::BIGINT[]) AS seen(a, d, t)
            WHERE device.account = seen.a AND device.name = seen.d
            """, logger: logger)
    }

    package func recordContexts(_ contexts: [DeviceIdentity: String]) async throws {
        guard !contexts.isEmpty else { return }
        let keys = Array(contexts.keys)
        let accounts = keys.map(\.accountID)
        let devices = keys.map(\.device)
        let values = keys.map { contexts[$0]! }
        try await client.query(
            """
            UPDATE device SET context = reported.c
            FROM UNNEST(\(accounts)::BIGINT[], \(devices)::TEXT[], \(values)::TEXT[]) AS reported(a, d, c)
            WHERE device.account = reported.a AND device.name = reported.d
            """, logger: logger)
    }

    package func signIn(accountName: String, device: String, issuedAt: Int64?, at now: Int64) async throws
        -> SignInResult
    {
        let nameHash = TokenHasher.hash(accountName)
        func lookup(_ connection: PostgresConnection) async throws -> SignInResult? {
            let erasedAt = try await rows(
                "SELECT erased_at FROM erased_account WHERE name_hash = \(nameHash)", as: Int64.self, on: connection
            ).first
            var found: (identity: DeviceIdentity, revokedAt: Int64?)?
            for try await (id, revokedAt) in try await connection.query(
                """
                SELECT account.id, device.revoked_at FROM account
                JOIN device ON device.account = account.id AND device.name = \(device)
                WHERE account.name = \(accountName)
                """, logger: logger
            ).decode((Int64, Int64?).self) {
                found = (DeviceIdentity(accountID: id, device: device), revokedAt)
            }
            return SignInResult.decide(
                identity: found?.identity, revokedAt: found?.revokedAt ?? nil, erasedAt: erasedAt, issuedAt: issuedAt)
        }
        if let result = try await client.withConnection(lookup) { return result }
        return try await transaction { connection in
            if let result = try await lookup(connection) { return result }
            try await connection.query(
                "INSERT INTO account (name, created_at) VALUES (\(accountName), \(now)) ON CONFLICT (name) DO NOTHING",
                logger: logger)
            guard
                let account = try await rows(
                    "SELECT id FROM account WHERE name = \(accountName)", as: Int64.self, on: connection
                ).first
            else { throw StoreError("account '\(accountName)' could not be created") }
            try await connection.query(
                "INSERT INTO device (account, name) VALUES (\(account), \(device)) ON CONFLICT DO NOTHING",
                logger: logger)
            return .identity(DeviceIdentity(accountID: account, device: device))
        }
    }

    package func insertAdminKey(hash: String, name: String, at now: Int64) async throws -> Bool {
        try await transaction { connection in
            try await rows(
                """
                INSERT INTO admin_key (hash, name, created_at) VALUES (\(hash), \(name), \(now))
                ON CONFLICT (name) DO NOTHING RETURNING 1
                """, as: Int32.self, on: connection
            ).count == 1
        }
    }

    package func adminKeys() async throws -> [AdminKeyRecord] {
        var keys: [AdminKeyRecord] = []
        for try await (name, createdAt) in try await client.query(
            "SELECT name, created_at FROM admin_key ORDER BY name COLLATE \"C\"", logger: logger
        ).decode((String, Int64).self) {
            keys.append(AdminKeyRecord(name: name, createdAt: createdAt))
        }
        return keys
    }

    package func revokeAdminKey(name: String) async throws -> Bool {
        try await transaction { connection in
            try await rows(
                "DELETE FROM admin_key WHERE name = \(name) RETURNING 1", as: Int32.self, on: connection
            ).count > 0
        }
    }

    package func adminKeyName(forHash hash: String) async throws -> String? {
        for try await name in try await client.query(
            "SELECT name FROM admin_key WHERE hash = \(hash)", logger: logger
        ).decode(String.self) {
            return name
        }
        return nil
    }

    package func insertConsoleSession(_ session: ConsoleSessionRecord, now: Int64) async throws {
        try await transaction { connection in
            try await connection.query("DELETE FROM console_session WHERE expires_at <= \(now)", logger: logger)
            try await connection.query(
                """
                INSERT INTO console_session (id_hash, admin_key_hash, admin_key_name, csrf, expires_at)
                VALUES (\(session.idHash), \(session.adminKeyHash), \(session.adminKeyName), \(session.csrf),
                    \(session.expiresAt))
                """, logger: logger)
        }
    }

    package func consoleSession(idHash: String, now: Int64) async throws -> ConsoleSessionRecord? {
        for try await (keyHash, keyName, csrf, expiresAt) in try await client.query(
            """
            SELECT admin_key_hash, admin_key_name, csrf, expires_at FROM console_session
            WHERE id_hash = \(idHash) AND expires_at > \(now)
            """, logger: logger
        ).decode((String, String, String, Int64).self) {
            return ConsoleSessionRecord(
                idHash: idHash, adminKeyHash: keyHash, adminKeyName: keyName, csrf: csrf, expiresAt: expiresAt)
        }
        return nil
    }

    package func deleteConsoleSession(idHash: String) async throws {
        try await client.query("DELETE FROM console_session WHERE id_hash = \(idHash)", logger: logger)
    }
}
