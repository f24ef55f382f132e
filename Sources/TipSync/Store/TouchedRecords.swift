import GRDB
import TipSyncCore

/// What a batch of changes touched, so each record is written once, from the merged state, however
/// many changes of the batch touched it (a pull page sets the same parameter or tip many times), and
/// a page's donations go in multi-row `INSERT`s.
///
/// Writing every touched record from the *final* state gives the same rows as writing after each
/// change: each write replaces the record with what the state holds, so only the last one counts.
struct TouchedRecords {
    var datastoreReset = false
    var parameters: Set<String> = []
    var tips: Set<String> = []
    var displays: Set<TouchedDisplay> = []
    var deletedEvents: Set<String> = []
    var trimmedEvents: Set<String> = []
    var donations: [(event: String, donation: Donation)] = []

    struct TouchedDisplay: Hashable {
        var tip: String
        var key: DisplayCounter.Key
    }

    init(_ changes: some Sequence<Change>, limits: [String: DonationLimit]) {
        for change in changes {
            switch change.operation {
            case .parameter(let id, _): parameters.insert(id)
            case .eligibility(let tip, _): tips.insert(tip)
            case .display(let tip, let epoch, _, _, _):
                displays.insert(TouchedDisplay(tip: tip, key: DisplayCounter.Key(device: change.device, epoch: epoch)))
            case .donation(let event, let id, let date, let info):
                donations.append((event, Donation(id: id, date: date, info: info, stamp: change.stamp)))
                if limits[event] != nil { trimmedEvents.insert(event) }
            case .donationsDeleted(let event): deletedEvents.insert(event)
            case .datastoreReset: datastoreReset = true
            }
        }
    }

    /// Writes every touched record as `state` holds it (in the caller's transaction).
    func write(state: ReplicaState, _ db: Database) throws {
        if datastoreReset {
            // Rewrites every table from the state: everything else of the batch included.
            try ReplicaDatabase.rewriteAll(state, db)
            return
        }
        for id in parameters { try ReplicaDatabase.writeParameter(id, state: state, db) }
        for tip in tips { try ReplicaDatabase.writeTip(tip, state: state, db) }
        for display in displays { try ReplicaDatabase.writeDisplay(display.tip, key: display.key, state: state, db) }
        // Deletions first: they only remove donations stamped at or before them, which the state no
        // longer holds, so none of the inserts below is undone by them.
        for event in deletedEvents { try ReplicaDatabase.writeDonationDeletion(event, state: state, db) }
        try insertKeptDonations(state: state, db)
        // Then what trimming dropped: rows older than the oldest donation the state keeps.
        for event in trimmedEvents {
            guard let oldest = state.events[event]?.donations.first else { continue }
            try db.cachedStatement(
                sql: "DELETE FROM donation WHERE eventID = ? AND (date < ? OR (date = ? AND id < ?))"
            ).execute(arguments: [event, oldest.date, oldest.date, oldest.id])
        }
    }

    static let rowsPerInsert = 100

    /// The batch's donations the merged state kept, `rowsPerInsert` rows per statement.
    private func insertKeptDonations(state: ReplicaState, _ db: Database) throws {
        var values: [(any DatabaseValueConvertible)?] = []
        var rows = 0
        func flush() throws {
            guard rows > 0 else { return }
            let placeholders = Array(repeating: "(?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
            let sql = "INSERT OR IGNORE INTO donation (eventID, id, date, info, hlc, device) VALUES " + placeholders
            // Full statements are reused; the last, shorter one of a batch is prepared once.
            let statement =
                rows == Self.rowsPerInsert ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
            try statement.execute(arguments: StatementArguments(values))
            values.removeAll(keepingCapacity: true)
            rows = 0
        }
        values.reserveCapacity(Self.rowsPerInsert * 6)
        for (event, donation) in donations {
            guard let record = state.events[event], record.ids.contains(donation.id) else { continue }
            values += [
                event, donation.id, donation.date, donation.info?.canonicalText, donation.stamp.hlc.rawValue,
                donation.stamp.device,
            ]
            rows += 1
            if rows == Self.rowsPerInsert { try flush() }
        }
        try flush()
    }
}
