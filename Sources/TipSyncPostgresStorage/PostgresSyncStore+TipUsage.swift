package import PostgresNIO
import TipSyncCore
import TipSyncServerBasics
package import TipSyncStorage

extension PostgresSyncStore {
    package func accountsWithNewChanges(after: Int64, limit: Int) async throws -> [Int64] {
        var ids: [Int64] = []
        for try await id in try await client.query(
            """
            SELECT id FROM account WHERE id > \(after) AND next_position > tip_usage_through ORDER BY id
            LIMIT \(limit)
            """,
            logger: logger
        ).decode(Int64.self) {
            ids.append(id)
        }
        return ids
    }

    package func tipUsage(account: Int64) async throws -> [TipUsage] {
        try await client.withConnection { connection in try await tipUsage(account: account, on: connection) }
    }

    package func tipUsage(account: Int64, on connection: PostgresConnection) async throws -> [TipUsage] {
        var usage: [TipUsage] = []
        for try await row in try await connection.query(
            """
            SELECT tip, reason, displays, first_display_at, invalidated_at, experiment, arm, reached_at, exposed_at,
                converted_at
            FROM tip_usage WHERE account = \(account) ORDER BY tip
            """, logger: logger
        ).decode(UsageRow.self) {
            usage.append(Self.usage(of: row))
        }
        return usage
    }

    /// A `tip_usage` row's columns, in the order every read selects them.
    package typealias UsageRow = (String, String?, Int64, Int64?, Int64?, String?, String?, Int64?, Int64?, Int64?)

    package static func usage(of row: UsageRow) -> TipUsage {
        let (tip, reason, displays, first, invalidated, experiment, arm, reached, exposed, converted) = row
        return TipUsage(
            tip: tip, reason: reason.flatMap(InvalidationReason.init(rawValue:)), displays: displays,
            firstDisplayAt: first, invalidatedAt: invalidated,
            experiment: experiment.flatMap { id in
                arm.flatMap(TipExperiment.Arm.init(rawValue:)).map {
                    ExperimentParticipation(
                        experiment: id, arm: $0, reachedAt: reached, exposedAt: exposed, convertedAt: converted)
                }
            })
    }

    package func tipUsage(tip: String) async throws -> [TipUsage] {
        var usage: [TipUsage] = []
        for try await row in try await client.query(
            """
            SELECT tip, reason, displays, first_display_at, invalidated_at, experiment, arm, reached_at, exposed_at,
                converted_at
            FROM tip_usage WHERE tip = \(tip)
            """,
            logger: logger
        ).decode(UsageRow.self) {
            usage.append(Self.usage(of: row))
        }
        return usage
    }

    package func experimentParticipants(experiment: String) async throws -> [(account: String, usage: TipUsage)] {
        var participants: [(account: String, usage: TipUsage)] = []
        for try await (name, tip, reason, displays, first, invalidated, id, arm, reached, exposed, converted)
            in try await client.query(
                """
                SELECT account.name, u.tip, u.reason, u.displays, u.first_display_at, u.invalidated_at, u.experiment,
                    u.arm, u.reached_at, u.exposed_at, u.converted_at
                FROM tip_usage u JOIN account ON account.id = u.account
                WHERE u.experiment = \(experiment) ORDER BY account.name
                """, logger: logger
            ).decode((String, String, String?, Int64, Int64?, Int64?, String?, String?, Int64?, Int64?, Int64?).self)
        {
            participants.append(
                (
                    account: name,
                    usage: Self.usage(
                        of: (tip, reason, displays, first, invalidated, id, arm, reached, exposed, converted))
                ))
        }
        return participants
    }

    /// Adds counter deltas to the per-tip totals (in the caller's transaction).
    package func apply(_ deltas: [TipCounterKey: Int64], on connection: PostgresConnection) async throws {
        guard !deltas.isEmpty else { return }
        // In a fixed order, so concurrent transactions lock the counters' rows in the same order.
        let sorted = deltas.sorted { ($0.key.tip, $0.key.name) < ($1.key.tip, $1.key.name) }
        try await connection.query(
            """
            INSERT INTO tip_counter (tip, name, count)
            SELECT * FROM UNNEST(\(sorted.map(\.key.tip))::TEXT[], \(sorted.map(\.key.name))::TEXT[],
                \(sorted.map(\.value))::BIGINT[])
            ON CONFLICT (tip, name) DO UPDATE SET count = tip_counter.count + excluded.count
            """, logger: logger)
        try await connection.query(
            "DELETE FROM tip_counter WHERE count = 0 AND tip = ANY(\(Array(Set(sorted.map(\.key.tip))))::TEXT[])",
            logger: logger)
    }

    package func saveTipUsage(_ usage: [TipUsage], account: Int64, through position: Int64) async throws -> Bool {
        try await transaction { connection in
            // An account erased meanwhile stays erased: nothing is written for it.
            guard
                try await rows(
                    "SELECT id FROM account WHERE id = \(account) FOR UPDATE", as: Int64.self, on: connection
                ).first != nil
            else { return false }
            let old = try await tipUsage(account: account, on: connection)
            try await apply(TipUsageCounters.deltas(replacing: old, with: usage), on: connection)
            try await connection.query("DELETE FROM tip_usage WHERE account = \(account)", logger: logger)
            for row in usage {
                try await connection.query(
                    """
                    INSERT INTO tip_usage (
                        account, tip, reason, displays, first_display_at, invalidated_at, experiment, arm, reached_at,
                        exposed_at, converted_at)
                    VALUES (\(account), \(row.tip), \(row.reason?.rawValue), \(row.displays), \(row.firstDisplayAt),
                        \(row.invalidatedAt), \(row.experiment?.experiment), \(row.experiment?.arm.rawValue),
                        \(row.experiment?.reachedAt), \(row.experiment?.exposedAt), \(row.experiment?.convertedAt))
                    """, logger: logger)
            }
            try await connection.query(
                "UPDATE account SET tip_usage_through = GREATEST(tip_usage_through, \(position)) WHERE id = \(account)",
                logger: logger)
            return true
        }
    }

    package func tipUsageTotals() async throws -> [TipUsageTotals] {
        var rows: [(tip: String, name: String, count: Int64)] = []
        for try await (tip, name, count) in try await client.query(
            "SELECT tip, name, count FROM tip_counter", logger: logger
        ).decode((String, String, Int64).self) {
            rows.append((tip, name, count))
        }
        return TipUsageCounters.totals(rows: rows)
    }

    package func overview() async throws -> StoreOverview {
        var overview = StoreOverview(accounts: 0, devices: 0, databaseBytes: 0, recentCompactions: [])
        for try await (accounts, devices, bytes) in try await client.query(
            """
            SELECT (SELECT COUNT(*) FROM account), (SELECT COUNT(*) FROM device),
                pg_database_size(current_database())
            """, logger: logger
        ).decode((Int64, Int64, Int64).self) {
            overview.accounts = Int(accounts)
            overview.devices = Int(devices)
            overview.databaseBytes = bytes
        }
        for try await (name, at) in try await client.query(
            """
            SELECT name, compacted_at FROM account WHERE compacted_at IS NOT NULL
            ORDER BY compacted_at DESC LIMIT 5
            """, logger: logger
        ).decode((String, Int64).self) {
            overview.recentCompactions.append(StoreOverview.RecentCompaction(account: name, at: at))
        }
        return overview
    }

    package func catalogJSON() async throws -> String? {
        for try await value in try await client.query(
            "SELECT value FROM server_meta WHERE key = 'catalog'", logger: logger
        ).decode(String.self) {
            return value
        }
        return nil
    }

    package func insertCatalogVersion(_ text: String, uploadedBy: String, at now: Int64, restoredFrom: Int64?)
        async throws
        -> Int64
    {
        try await transaction { connection in
            var version: Int64 = 0
            for try await value in try await connection.query(
                """
                INSERT INTO catalog_version (text, uploaded_by, uploaded_at, restored_from)
                VALUES (\(text), \(uploadedBy), \(now), \(restoredFrom)) RETURNING version
                """, logger: logger
            ).decode(Int64.self) {
                version = value
            }
            try await connection.query(
                """
                INSERT INTO server_meta (key, value) VALUES ('catalog', \(text))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, logger: logger)
            try await connection.query("UPDATE account SET tip_usage_through = 0", logger: logger)
            try await connection.query(
                "SELECT pg_notify(\(Self.channel), \(StoreEvent.catalog.payload))", logger: logger)
            return version
        }
    }

    package func latestCatalogVersion() async throws -> Int64? {
        for try await value in try await client.query("SELECT max(version) FROM catalog_version", logger: logger)
            .decode(Int64?.self)
        {
            return value
        }
        return nil
    }

    package func catalogVersions() async throws -> [CatalogVersionRecord] {
        var records: [CatalogVersionRecord] = []
        for try await (version, text, uploadedBy, uploadedAt, restoredFrom) in try await client.query(
            "SELECT version, text, uploaded_by, uploaded_at, restored_from FROM catalog_version ORDER BY version DESC",
            logger: logger
        ).decode((Int64, String, String, Int64, Int64?).self) {
            records.append(
                CatalogVersionRecord(
                    version: version, uploadedBy: uploadedBy, uploadedAt: uploadedAt, restoredFrom: restoredFrom,
                    text: text))
        }
        return records
    }

}
