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
    var donations: [DonationRows.Row] = []
    /// Every change of the batch changed the state when merged (a pull page's applied changes), so
    /// each of its donations was kept, at least until something later in the batch removed it.
    var eachMerged = false

    struct TouchedDisplay: Hashable {
        var tip: String
        var key: DisplayCounter.Key
    }

    /// What `changes` touched; with `merged`, only the changes it marks `true` (the others left
    /// the state as it was).
    init(_ changes: [Change], merged: [Bool]? = nil, limits: [String: DonationLimit], eachMerged: Bool = false) {
        self.eachMerged = eachMerged
        // By index: iterating the array would copy each change (retaining its strings) only to
        // read a few of its fields.
        for index in changes.indices where merged?[index] ?? true {
            switch changes[index].operation {
            case .parameter(let id, _): parameters.insert(id)
            case .eligibility(let tip, _): tips.insert(tip)
            case .display(let tip, let epoch, _, _, _):
                displays.insert(
                    TouchedDisplay(tip: tip, key: DisplayCounter.Key(device: changes[index].device, epoch: epoch)))
            case .donation(let event, let id, let date, let info):
                donations.append(
                    DonationRows.Row(event: event, id: id, date: date, info: info, stamp: changes[index].stamp))
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

    /// The batch's donations the merged state kept (``DonationRows``).
    private func insertKeptDonations(state: ReplicaState, _ db: Database) throws {
        var rows = DonationRows()
        for donation in donations {
            // A donation the merge kept is still there at the end of the batch unless the event's
            // limit pruned it or a deletion removed it: only then is it looked up.
            if !eachMerged || (!trimmedEvents.isEmpty && trimmedEvents.contains(donation.event))
                || (!deletedEvents.isEmpty && deletedEvents.contains(donation.event))
            {
                guard let record = state.events[donation.event], record.ids.contains(donation.id) else { continue }
            }
            try rows.append(donation, db)
        }
        try rows.flush(db)
    }
}
