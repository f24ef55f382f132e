/// Where every change — local or remote — is merged. These rules are `protocol.md`'s
/// "Merge semantics"; each is idempotent, commutative and associative, so replicas that have seen
/// the same changes agree whatever the order or duplication of delivery.
extension ReplicaState {
    /// Merges one change into the state. Returns whether anything changed.
    ///
    /// - Parameter donationLimits: per-event limits; donations that can never be visible under them
    ///   again are dropped, whatever order they arrive in (visible ones are chosen when read).
    @discardableResult
    public mutating func apply(_ change: Change, donationLimits: [String: DonationLimit] = [:]) -> Bool {
        let stamp = change.stamp
        if case .datastoreReset = change.operation {
            return applyDatastoreReset(stamp)
        }
        // Nothing stamped at or before the latest datastore reset survives it — except that a
        // display counter belongs to its epoch, not its stamp: a reset removes exactly the counters
        // of epochs before it (on arrival and when the reset comes later alike, or merge order would
        // matter), checked in `mergeDisplay`.
        if let reset = datastoreReset, stamp <= reset {
            if case .display = change.operation {} else { return false }
        }
        switch change.operation {
        case .parameter(let id, let value):
            return mergeParameter(id, Versioned(value: value, stamp: stamp))
        case .eligibility(let tip, let state):
            return mergeEligibility(tip, Versioned(value: state, stamp: stamp))
        case .display(let tip, let epoch, let count, let duration, let lastDisplayed):
            return mergeDisplay(
                tip, key: DisplayCounter.Key(device: change.device, epoch: epoch),
                DisplayCounter(count: count, duration: duration, lastDisplayed: lastDisplayed))
        case .donation(let event, let id, let date, let info):
            return mergeDonation(
                event, Donation(id: id, date: date, info: info, stamp: stamp),
                limit: donationLimits[event] ?? .unlimited)
        case .donationsDeleted(let event):
            return mergeDonationsDeleted(event, stamp)
        case .datastoreReset:
            return false  // handled above
        }
    }

    /// Merges a batch of changes in order (a pull page): the same state, and the same answer for
    /// each change, as ``apply(_:donationLimits:)`` on each in turn. Donations to an event without
    /// a count limit are gathered and inserted together (one sort and one merge per event, not a
    /// sorted insert each), before anything else of the batch touches that event's donations.
    public mutating func apply(_ changes: [Change], donationLimits: [String: DonationLimit] = [:]) -> [Bool] {
        var changed = [Bool](repeating: false, count: changes.count)
        struct Gathered {
            /// The event's latest deletion when the batch's first donation to it came: only a
            /// deletion of the event moves it, and that inserts what was gathered first.
            let deletedAt: Stamp?
            var indices: [Int] = []
            var donations: [Donation] = []

            /// Gathers the donation unless the event's deletion removed it (`mergeDonation`'s rule).
            mutating func add(_ donation: Donation, at index: Int) {
                if let deletedAt, donation.stamp <= deletedAt { return }
                indices.append(index)
                donations.append(donation)
            }
        }
        var gathered: [String: Gathered] = [:]
        func insertGathered(_ event: String) {
            guard var batch = gathered.removeValue(forKey: event), !batch.donations.isEmpty else { return }
            // Moved out, so the list handed on is the only reference to its buffer: sorting a
            // shared one would copy every donation first.
            var donations: [Donation] = []
            swap(&donations, &batch.donations)
            let inserted = events[event, default: EventRecord()].insert(contentsOf: consume donations)
            for (index, isNew) in zip(batch.indices, inserted) { changed[index] = isNew }
        }
        // By index: iterating the array would copy each change (retaining its strings and payload)
        // before the donation takes its own copies of them.
        for index in changes.indices {
            switch changes[index].operation {
            case .donation(let event, let id, let date, let info) where donationLimits[event]?.maximumCount == nil:
                // `mergeDonation`'s rules, checked now: only this event's deletion or a reset can
                // change their answer, and both insert what was gathered first.
                let stamp = changes[index].stamp
                if let reset = datastoreReset, stamp <= reset { continue }
                gathered[event, default: Gathered(deletedAt: events[event]?.deletedAt)].add(
                    Donation(id: id, date: date, info: info, stamp: stamp), at: index)
            case .donation(let event, _, _, _), .donationsDeleted(let event):
                insertGathered(event)
                changed[index] = apply(changes[index], donationLimits: donationLimits)
            case .datastoreReset:
                for event in Array(gathered.keys) { insertGathered(event) }
                changed[index] = apply(changes[index], donationLimits: donationLimits)
            default:
                changed[index] = apply(changes[index], donationLimits: donationLimits)
            }
        }
        for event in Array(gathered.keys) { insertGathered(event) }
        return changed
    }

    /// Parameters: last writer wins by (HLC, device).
    mutating func mergeParameter(_ id: String, _ incoming: Versioned<JSONValue>) -> Bool {
        let current = parameters[id]
        let merged = Versioned.merge(current, incoming)
        guard merged != current else { return false }
        parameters[id] = merged
        return true
    }

    /// Invalidation: a last-writer-wins register written only by invalidate / resetEligibility /
    /// resetDatastore, so no display or donation can resurrect a dismissed tip. `.eligible` also
    /// raises the tip's reset stamp, which starts a new display epoch.
    mutating func mergeEligibility(_ tip: String, _ incoming: Versioned<EligibilityState>) -> Bool {
        let current = tips[tip] ?? TipRecord()
        var record = current
        record.eligibility = Versioned.merge(current.eligibility, incoming)
        if incoming.value == .eligible {
            record.resetStamp = laterEpoch(record.resetStamp, incoming.stamp)
        }
        guard record != current else { return false }
        tips[tip] = record
        return true
    }

    /// Displays: per-(device, epoch) grow-only counters; totals are sums over devices in the tip's
    /// current epoch. Counters of earlier epochs are kept (they still say the tip has appeared).
    mutating func mergeDisplay(_ tip: String, key: DisplayCounter.Key, _ incoming: DisplayCounter) -> Bool {
        if let reset = datastoreReset, epochPrecedes(key.epoch, reset) { return false }
        let current = displays[tip]?[key]
        let merged = DisplayCounter.merge(current, incoming)
        guard merged != current else { return false }
        displays[tip, default: [:]][key] = merged
        lastDisplayAnywhere = max(lastDisplayAnywhere ?? merged.lastDisplayed, merged.lastDisplayed)
        return true
    }

    /// Donations: a grow-only set keyed by donation id; what the limit hides for good is dropped.
    mutating func mergeDonation(_ event: String, _ donation: Donation, limit: DonationLimit) -> Bool {
        if let deletedAt = events[event]?.deletedAt, donation.stamp <= deletedAt { return false }
        // Mutated in place: copying an event's donations on every insert would make bursts quadratic.
        return events[event, default: EventRecord()].insertPruning(donation, limit: limit)
    }

    /// `deleteDonations()`: a max-register; donations stamped at or before it are gone.
    mutating func mergeDonationsDeleted(_ event: String, _ stamp: Stamp) -> Bool {
        var record = events[event] ?? EventRecord()
        if let deletedAt = record.deletedAt, stamp <= deletedAt { return false }
        record.deletedAt = stamp
        record.removeAll { $0.stamp <= stamp }
        events[event] = record
        return true
    }

    /// `resetDatastore()`: a max-register; every parameter, eligibility, display and donation
    /// stamped at or before it is removed on every replica, and later arrivals of such records are ignored.
    mutating func applyDatastoreReset(_ stamp: Stamp) -> Bool {
        if let reset = datastoreReset, stamp <= reset { return false }
        datastoreReset = stamp
        parameters = parameters.filter { $0.value.stamp > stamp }
        tips = tips.compactMapValues { record in
            var record = record
            if let eligibility = record.eligibility, eligibility.stamp <= stamp { record.eligibility = nil }
            if let resetStamp = record.resetStamp, resetStamp <= stamp { record.resetStamp = nil }
            return record.eligibility == nil && record.resetStamp == nil ? nil : record
        }
        displays = displays.compactMapValues { counters in
            let kept = counters.filter { !epochPrecedes($0.key.epoch, stamp) }
            return kept.isEmpty ? nil : kept
        }
        lastDisplayAnywhere = displays.values.flatMap(\.values).map(\.lastDisplayed).max()
        events = events.compactMapValues { record in
            var record = record
            if let deletedAt = record.deletedAt, deletedAt <= stamp { record.deletedAt = nil }
            record.removeAll { $0.stamp <= stamp }
            return record.donations.isEmpty && record.deletedAt == nil ? nil : record
        }
        return true
    }
}
