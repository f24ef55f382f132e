import Foundation
import GRDB
import TipSyncCore

/// Writing merged changes: the records a change touched are written from the in-memory state
/// that already merged it, in the same transaction as the change-log entry.
extension ReplicaDatabase {
    /// Persists changes already merged into `state`, inside a transaction the caller holds.
    /// `local`: this device's own changes, which also go into the change log.
    /// `merged`: which of `changes` changed the state when merged (the others touched nothing and
    /// are skipped); nil: all of them.
    /// `observed`: the clock after observing remote changes, remembered across restarts.
    /// `eachMerged`: every change kept changed the state when merged (see ``TouchedRecords/eachMerged``).
    static func persist(
        _ changes: [Change], merged: [Bool]? = nil, local: Bool, state: ReplicaState,
        limits: [String: DonationLimit], observed: HLC? = nil, eachMerged: Bool = false, _ db: Database
    ) throws {
        if local {
            for index in changes.indices where merged?[index] ?? true { try appendToLog(changes[index], db) }
        }
        try TouchedRecords(changes, merged: merged, limits: limits, eachMerged: eachMerged).write(state: state, db)
        if let observed {
            let known = try meta(.observedHLC, db).flatMap { Int64($0) } ?? Int64.min
            if observed.rawValue > known { try setMeta(.observedHLC, String(observed.rawValue), db) }
        }
    }

    static func appendToLog(_ change: Change, _ db: Database) throws {
        let body = change.canonicalJSON
        try db.cachedStatement(sql: "INSERT INTO change (seq, hlc, kind, body) VALUES (?, ?, ?, ?)")
            .execute(arguments: [change.seq, change.hlc.rawValue, change.kind.rawValue, body])
    }

    static func writeParameter(_ id: String, state: ReplicaState, _ db: Database) throws {
        guard let versioned = state.parameters[id] else {
            try db.execute(sql: "DELETE FROM parameter WHERE id = ?", arguments: [id])
            return
        }
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO parameter (id, value, hlc, device) VALUES (?, ?, ?, ?)")
            .execute(arguments: [
                id, versioned.value.canonicalText, versioned.stamp.hlc.rawValue, versioned.stamp.device,
            ])
    }

    static func writeTip(_ tip: String, state: ReplicaState, _ db: Database) throws {
        guard let record = state.tips[tip] else {
            try db.execute(sql: "DELETE FROM tip WHERE id = ?", arguments: [tip])
            return
        }
        var stateText: String?
        var reason: String?
        switch record.eligibility?.value {
        case .eligible: stateText = "eligible"
        case .invalidated(let why): (stateText, reason) = ("invalidated", why.rawValue)
        case nil: break
        }
        try db.cachedStatement(
            sql:
                "INSERT OR REPLACE INTO tip (id, state, reason, hlc, device, resetHLC, resetDevice) VALUES (?, ?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [
            tip, stateText, reason, record.eligibility?.stamp.hlc.rawValue, record.eligibility?.stamp.device,
            record.resetStamp?.hlc.rawValue, record.resetStamp?.device,
        ])
    }

    static func writeDisplay(_ tip: String, key: DisplayCounter.Key, state: ReplicaState, _ db: Database) throws {
        guard let counter = state.displays[tip]?[key] else { return }
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO display (tipID, device, epochHLC, epochDevice, count, duration, lastDisplayed)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            tip, key.device, key.epoch?.hlc.rawValue ?? -1, key.epoch?.device ?? "", counter.count, counter.duration,
            counter.lastDisplayed,
        ])
    }

    /// Stores `donation` if the merged state kept it (one row; a page's donations go through
    /// ``TouchedRecords`` in multi-row statements).
    static func writeDonation(_ event: String, _ donation: Donation, state: ReplicaState, _ db: Database) throws {
        guard let record = state.events[event], record.ids.contains(donation.id) else { return }
        try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO donation (eventID, id, date, info, hlc, device) VALUES (?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [
            event, donation.id, donation.date, donation.info?.canonicalText, donation.stamp.hlc.rawValue,
            donation.stamp.device,
        ])
    }

    static func writeDonationDeletion(_ event: String, state: ReplicaState, _ db: Database) throws {
        guard let deletedAt = state.events[event]?.deletedAt else { return }
        try db.execute(
            sql: "INSERT OR REPLACE INTO event (id, deletedHLC, deletedDevice) VALUES (?, ?, ?)",
            arguments: [event, deletedAt.hlc.rawValue, deletedAt.device])
        try db.execute(
            sql: "DELETE FROM donation WHERE eventID = ? AND (hlc < ? OR (hlc = ? AND device <= ?))",
            arguments: [event, deletedAt.hlc.rawValue, deletedAt.hlc.rawValue, deletedAt.device])
    }

    /// Rewrites every record table from the state (after a datastore reset, which is rare).
    static func rewriteAll(_ state: ReplicaState, _ db: Database) throws {
        try db.execute(
            sql: "DELETE FROM parameter; DELETE FROM tip; DELETE FROM display; DELETE FROM event; DELETE FROM donation")
        try setMeta(.datastoreResetHLC, state.datastoreReset.map { String($0.hlc.rawValue) }, db)
        try setMeta(.datastoreResetDevice, state.datastoreReset?.device, db)
        for id in state.parameters.keys { try writeParameter(id, state: state, db) }
        for tip in state.tips.keys { try writeTip(tip, state: state, db) }
        for (tip, counters) in state.displays {
            for key in counters.keys { try writeDisplay(tip, key: key, state: state, db) }
        }
        for (event, record) in state.events {
            if record.deletedAt != nil { try writeDonationDeletion(event, state: state, db) }
            for donation in record.donations { try writeDonation(event, donation, state: state, db) }
        }
    }

    /// This device's change log after `seq`, in order.
    /// - Parameter bytes: stop before the change whose stored text (its canonical JSON) would take
    ///   the texts read past this many bytes, a comma between each; the first is read whatever its size.
    func localChanges(after seq: Int64, limit: Int = .max, bytes: Int = .max) throws -> [Change] {
        try writer.read { db in
            let bodies = try String.fetchCursor(
                db, sql: "SELECT body FROM change WHERE seq > ? ORDER BY seq LIMIT ?", arguments: [seq, limit])
            var changes: [Change] = []
            var total = 0
            while let body = try bodies.next() {
                total += body.utf8.count + (changes.isEmpty ? 0 : 1)
                if !changes.isEmpty, total > bytes { break }
                changes.append(try JSONCoding.decode(Change.self, from: body.utf8))
            }
            return changes
        }
    }
}

extension ReplicaDatabase {
    /// Rewrites the given local changes (same sequence numbers, new stamps) and every record table
    /// from `state`, and forgets the pull cursor — one transaction.
    func replaceLog(_ changes: [Change], state: ReplicaState) throws {
        try writer.write { db in
            for change in changes {
                let body = change.canonicalJSON
                try db.execute(
                    sql: "UPDATE change SET hlc = ?, body = ? WHERE seq = ?",
                    arguments: [change.hlc.rawValue, body, change.seq])
            }
            try Self.rewriteAll(state, db)
            try Self.setMeta(.pullCursor, nil, db)
        }
    }
}
