import GRDB
import TipSyncCore

/// Reading the whole replica back into memory at open.
extension ReplicaDatabase {
    struct Snapshot {
        var state: ReplicaState
        /// The next sequence number for this device's change log.
        var nextSeq: Int64
        /// The largest HLC the replica has issued or stored, so the clock never runs backwards.
        var latestHLC: HLC
    }

    func load() throws -> Snapshot {
        try writer.read { db in try Self.load(db) }
    }

    /// Loads on the writer connection, with the `data_version` that snapshot corresponds to.
    func loadWithVersion() throws -> (Snapshot, dataVersion: Int64) {
        try writer.write { db in (try Self.load(db), try Self.dataVersion(db)) }
    }

    /// SQLite's commit counter as seen by this connection: it changes only when *another*
    /// connection — another process sharing the store — commits.
    static func dataVersion(_ db: Database) throws -> Int64 {
        // Asked before every write transaction: prepared once per connection, not per call.
        try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
    }

    static func load(_ db: Database) throws -> Snapshot {
        var latest = HLC.zero
        func stamp(_ hlc: Int64?, _ device: String?) -> Stamp? {
            guard let hlc, let device else { return nil }
            let value = HLC(rawValue: hlc)
            latest = max(latest, value)
            return Stamp(hlc: value, device: device)
        }
        let reset = stamp(
            try meta(.datastoreResetHLC, db).flatMap { Int64($0) }, try meta(.datastoreResetDevice, db))

        var parameters: [String: Versioned<JSONValue>] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, value, hlc, device FROM parameter") {
            parameters[row["id"]] = Versioned(
                value: try JSONValue(parsing: row["value"]), stamp: stamp(row["hlc"], row["device"])!)
        }

        var tips: [String: ReplicaState.TipRecord] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM tip") {
            var record = ReplicaState.TipRecord()
            if let state: String = row["state"], let s = stamp(row["hlc"], row["device"]) {
                let value: EligibilityState =
                    state == "eligible"
                    ? .eligible : .invalidated(InvalidationReason(rawValue: row["reason"]) ?? .tipClosed)
                record.eligibility = Versioned(value: value, stamp: s)
            }
            record.resetStamp = stamp(row["resetHLC"], row["resetDevice"])
            tips[row["id"]] = record
        }

        var displays: [String: [DisplayCounter.Key: DisplayCounter]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM display") {
            let epochHLC: Int64 = row["epochHLC"]
            let epoch = epochHLC < 0 ? nil : stamp(epochHLC, row["epochDevice"])
            let key = DisplayCounter.Key(device: row["device"], epoch: epoch)
            displays[row["tipID"], default: [:]][key] = DisplayCounter(
                count: row["count"], duration: row["duration"], lastDisplayed: row["lastDisplayed"])
        }

        var deletions: [String: Stamp] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM event") {
            deletions[row["id"]] = stamp(row["deletedHLC"], row["deletedDevice"])
        }

        var donations: [String: [Donation]] = [:]
        let cursor = try Row.fetchCursor(db, sql: "SELECT eventID, id, date, info, hlc, device FROM donation")
        // Positional columns: this loop runs once per stored donation.
        while let row = try cursor.next() {
            let info: String? = row[3]
            donations[row[0], default: []].append(
                Donation(
                    id: row[1], date: row[2], info: try info.map(JSONValue.init(parsing:)),
                    stamp: stamp(row[4], row[5])!))
        }

        if let observed = try meta(.observedHLC, db).flatMap({ Int64($0) }) {
            latest = max(latest, HLC(rawValue: observed))
        }
        let maxSeq = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM change") ?? 0
        if let maxHLC = try Int64.fetchOne(db, sql: "SELECT MAX(hlc) FROM change") {
            latest = max(latest, HLC(rawValue: maxHLC))
        }
        let state = ReplicaState(
            datastoreReset: reset, parameters: parameters, tips: tips, displays: displays, donations: donations,
            donationDeletions: deletions)
        return Snapshot(state: state, nextSeq: maxSeq + 1, latestHLC: latest)
    }
}
