package import GRDB
import TipSyncCore
import TipSyncServerBasics
package import TipSyncStorage

extension SQLiteSyncStore {
    package func accountsWithNewChanges(after: Int64, limit: Int) async throws -> [Int64] {
        try await read { db in
            try Int64.fetchAll(
                db,
                sql: "SELECT id FROM account WHERE id > ? AND nextPosition > tipUsageThrough ORDER BY id LIMIT ?",
                arguments: [after, limit])
        }
    }

    package func tipUsage(account: Int64) async throws -> [TipUsage] {
        try await read { db in try Self.tipUsage(account: account, db) }
    }

    package static func tipUsage(account: Int64, _ db: Database) throws -> [TipUsage] {
        try Row.fetchAll(
            db, sql: "SELECT \(usageColumns) FROM tip_usage WHERE account = ? ORDER BY tip", arguments: [account]
        ).map(Self.usage(of:))
    }

    /// The columns ``usage(of:)`` reads, in order.
    package static let usageColumnNames = [
        "tip", "reason", "displays", "firstDisplayAt", "invalidatedAt", "experiment", "arm", "reachedAt", "exposedAt",
        "convertedAt",
    ]
    package static let usageColumns = usageColumnNames.joined(separator: ", ")

    /// A `tip_usage` row as a value.
    package static func usage(of row: Row) -> TipUsage {
        let experiment: ExperimentParticipation? = (row["experiment"] as String?).flatMap { id in
            (row["arm"] as String?).flatMap(TipExperiment.Arm.init(rawValue:)).map { arm in
                ExperimentParticipation(
                    experiment: id, arm: arm, reachedAt: row["reachedAt"], exposedAt: row["exposedAt"],
                    convertedAt: row["convertedAt"])
            }
        }
        return TipUsage(
            tip: row["tip"], reason: (row["reason"] as String?).flatMap(InvalidationReason.init(rawValue:)),
            displays: row["displays"], firstDisplayAt: row["firstDisplayAt"], invalidatedAt: row["invalidatedAt"],
            experiment: experiment)
    }

    /// Adds counter deltas to the per-tip totals (in the caller's transaction).
    package static func apply(_ deltas: [TipCounterKey: Int64], _ db: Database) throws {
        guard !deltas.isEmpty else { return }
        for (key, delta) in deltas {
            try db.execute(
                sql: """
                    INSERT INTO tip_counter (tip, name, count) VALUES (?, ?, ?)
                    ON CONFLICT (tip, name) DO UPDATE SET count = count + excluded.count
                    """, arguments: [key.tip, key.name, delta])
        }
        try db.execute(sql: "DELETE FROM tip_counter WHERE count = 0")
    }

    package func saveTipUsage(_ usage: [TipUsage], account: Int64, through position: Int64) async throws -> Bool {
        try await pool.write { db in
            // An account erased meanwhile stays erased: nothing is written for it.
            guard try Int64.fetchOne(db, sql: "SELECT id FROM account WHERE id = ?", arguments: [account]) != nil
            else { return false }
            let old = try Self.tipUsage(account: account, db)
            try Self.apply(TipUsageCounters.deltas(replacing: old, with: usage), db)
            try db.execute(sql: "DELETE FROM tip_usage WHERE account = ?", arguments: [account])
            for row in usage {
                try db.execute(
                    sql: """
                        INSERT INTO tip_usage (account, \(Self.usageColumns))
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        account, row.tip, row.reason?.rawValue, row.displays, row.firstDisplayAt, row.invalidatedAt,
                        row.experiment?.experiment, row.experiment?.arm.rawValue, row.experiment?.reachedAt,
                        row.experiment?.exposedAt, row.experiment?.convertedAt,
                    ])
            }
            try db.execute(
                sql: "UPDATE account SET tipUsageThrough = MAX(tipUsageThrough, ?) WHERE id = ?",
                arguments: [position, account])
            return true
        }
    }

    package func tipUsage(tip: String) async throws -> [TipUsage] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.usageColumns) FROM tip_usage WHERE tip = ?", arguments: [tip]
            ).map(Self.usage(of:))
        }
    }

    package func experimentParticipants(experiment: String) async throws -> [(account: String, usage: TipUsage)] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT account.name AS accountName, \(Self.usageColumnNames.map { "tip_usage.\($0)" }.joined(separator: ", "))
                    FROM tip_usage JOIN account ON account.id = tip_usage.account
                    WHERE tip_usage.experiment = ? ORDER BY account.name
                    """, arguments: [experiment]
            ).map { (account: $0["accountName"], usage: Self.usage(of: $0)) }
        }
    }

    package func tipUsageTotals() async throws -> [TipUsageTotals] {
        try await read { db in
            TipUsageCounters.totals(
                rows: try Row.fetchAll(db, sql: "SELECT tip, name, count FROM tip_counter").map {
                    (tip: $0["tip"], name: $0["name"], count: $0["count"])
                })
        }
    }

    package func overview() async throws -> StoreOverview {
        try await read { db in
            let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            return StoreOverview(
                accounts: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM account") ?? 0,
                devices: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM device") ?? 0,
                databaseBytes: pages * pageSize,
                recentCompactions: try Row.fetchAll(
                    db,
                    sql: """
                        SELECT name, compactedAt FROM account WHERE compactedAt IS NOT NULL
                        ORDER BY compactedAt DESC LIMIT 5
                        """
                ).map { StoreOverview.RecentCompaction(account: $0["name"], at: $0["compactedAt"]) })
        }
    }

    package func catalogJSON() async throws -> String? {
        try await read { db in try String.fetchOne(db, sql: "SELECT value FROM server_meta WHERE key = 'catalog'")
        }
    }

    package func insertCatalogVersion(_ text: String, uploadedBy: String, at now: Int64, restoredFrom: Int64?)
        async throws
        -> Int64
    {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO catalog_version (text, uploadedBy, uploadedAt, restoredFrom) VALUES (?, ?, ?, ?)
                    """, arguments: [text, uploadedBy, now, restoredFrom])
            let version = db.lastInsertedRowID
            try db.execute(
                sql: """
                    INSERT INTO server_meta (key, value) VALUES ('catalog', ?)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """, arguments: [text])
            try db.execute(sql: "UPDATE account SET tipUsageThrough = 0")
            return version
        }
    }

    package func latestCatalogVersion() async throws -> Int64? {
        try await read { db in try Int64.fetchOne(db, sql: "SELECT max(version) FROM catalog_version") }
    }

    package func catalogVersions() async throws -> [CatalogVersionRecord] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT version, text, uploadedBy, uploadedAt, restoredFrom FROM catalog_version ORDER BY version DESC"
            ).map {
                CatalogVersionRecord(
                    version: $0["version"], uploadedBy: $0["uploadedBy"], uploadedAt: $0["uploadedAt"],
                    restoredFrom: $0["restoredFrom"], text: $0["text"])
            }
        }
    }
}
