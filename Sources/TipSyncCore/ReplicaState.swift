import Synchronization

/// Everything a replica knows, as a pure value: the result of merging every change it has seen.
///
/// Two replicas that have applied the same set of changes, in any order and any number of times,
/// hold equal states (see ``apply(_:donationLimit:)`` in `ReplicaState+Merge.swift`).
public struct ReplicaState: Sendable, Equatable {
    /// A tip's synced record: its invalidation register and the latest `resetEligibility`.
    public struct TipRecord: Sendable, Hashable {
        public var eligibility: Versioned<EligibilityState>?
        /// The latest `resetEligibility()` stamp: it starts the tip's current display epoch.
        public var resetStamp: Stamp?

        public init(eligibility: Versioned<EligibilityState>? = nil, resetStamp: Stamp? = nil) {
            self.eligibility = eligibility
            self.resetStamp = resetStamp
        }
    }

    /// An event's donations, kept sorted by (date, id), and its latest `deleteDonations()`.
    public struct EventRecord: Sendable, Hashable {
        /// Every mutation also takes a new ``version`` (`changed()`, called where the list changes,
        /// checked on every path by `EventRecordVersionTests`).
        public private(set) var donations: [Donation] = []
        public private(set) var ids: Set<String> = []
        public var deletedAt: Stamp?
        /// Changes whenever `donations` does (never equal for two different lists), so rule results
        /// over them can be cached. Local bookkeeping: not part of equality.
        public private(set) var version: UInt64 = 0

        public init() {}

        public static func == (lhs: EventRecord, rhs: EventRecord) -> Bool {
            lhs.donations == rhs.donations && lhs.deletedAt == rhs.deletedAt
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(donations)
            hasher.combine(deletedAt)
        }

        private static let versions = Atomic<UInt64>(0)
        /// `donations` changed: a new version.
        private mutating func changed() {
            version = Self.versions.add(1, ordering: .relaxed).newValue
        }

        /// Inserts keeping (date, id) order; `false` when the id is already present.
        mutating func insert(_ donation: Donation) -> Bool {
            guard ids.insert(donation.id).inserted else { return false }
            if let last = donations.last, Donation.precedes(donation, last) {
                var low = 0
                var high = donations.count
                while low < high {
                    let mid = (low + high) / 2
                    if Donation.precedes(donations[mid], donation) { low = mid + 1 } else { high = mid }
                }
                donations.insert(donation, at: low)
            } else {
                donations.append(donation)
            }
            changed()
            return true
        }

        /// Inserts every donation whose id is not present yet (nor earlier in `batch`): the same
        /// list as inserting each in turn, built in one sort and one merge instead of a sorted
        /// insert (and a move of the later donations) each. Whether each was inserted, in order.
        ///
        /// Donations are moved, not copied, wherever the list allows (a copy retains four
        /// references): a cold start merges 90,000 of them.
        mutating func insert(contentsOf batch: consuming [Donation]) -> [Bool] {
            var inserted: [Bool] = []
            inserted.reserveCapacity(batch.count)
            ids.reserveCapacity(ids.count + batch.count)
            for index in batch.indices { inserted.append(ids.insert(batch[index].id).inserted) }
            var fresh: [Donation]
            if inserted.allSatisfy({ $0 }) {
                fresh = consume batch
            } else {
                fresh = []
                for (donation, isNew) in zip(batch, inserted) where isNew { fresh.append(donation) }
            }
            guard !fresh.isEmpty else { return inserted }
            fresh.sort(by: Donation.precedes)
            changed()
            guard let last = donations.last else {
                donations = fresh
                return inserted
            }
            // Room for the new ones, taken by placeholders that hold no references (appending
            // `fresh` itself would copy each donation, only to release the copies with `fresh`).
            var old = donations.count - 1
            donations.append(contentsOf: repeatElement(Donation.placeholder, count: fresh.count))
            // Donated after everything held (the usual case: donations are dated when made).
            if Donation.precedes(last, fresh[0]) {
                donations.withUnsafeMutableBufferPointer { buffer in
                    fresh.withUnsafeMutableBufferPointer { incoming in
                        for index in incoming.indices { swap(&buffer[old + 1 + index], &incoming[index]) }
                    }
                }
                return inserted
            }
            // Merged in place from the back: each donation moves once, by a swap, to where it
            // belongs (the placeholders are swapped out into `fresh`).
            fresh.withUnsafeMutableBufferPointer { incoming in
                donations.withUnsafeMutableBufferPointer { buffer in
                    var new = incoming.count - 1
                    var position = buffer.count - 1
                    while new >= 0 {
                        if old >= 0, Donation.precedes(incoming[new], buffer[old]) {
                            buffer.swapAt(position, old)
                            old -= 1
                        } else {
                            swap(&buffer[position], &incoming[new])
                            new -= 1
                        }
                        position -= 1
                    }
                }
            }
            return inserted
        }

        /// Inserts, then drops what the limit makes invisible for good (``pruneDominated(keeping:)``);
        /// whether the donation is kept.
        mutating func insertPruning(_ donation: Donation, limit: DonationLimit) -> Bool {
            guard insert(donation) else { return false }
            if let maximum = limit.maximumCount { pruneDominated(keeping: maximum) }
            return ids.contains(donation.id)
        }

        mutating func removeAll(where shouldRemove: (Donation) -> Bool) {
            let removed = donations.filter(shouldRemove)
            guard !removed.isEmpty else { return }
            donations.removeAll(where: shouldRemove)
            changed()
            for donation in removed { ids.remove(donation.id) }
        }

        /// Drops every donation that no future change can make visible under a `maximumCount` limit
        /// (``DonationDominance``): unlike keeping "the newest `maximum`", which loses donations a
        /// later deletion would have revealed, it depends only on the set present.
        mutating func pruneDominated(keeping maximum: Int) {
            guard maximum >= 0, donations.count > maximum else { return }
            let dominated = DonationDominance.dominated(
                stampsInRankOrder: donations.lazy.map(\.stamp), keeping: maximum)
            guard !dominated.isEmpty else { return }
            for index in dominated { ids.remove(donations[index].id) }
            donations = donations.indices.filter { !dominated.contains($0) }.map { donations[$0] }
            changed()
        }
    }

    /// The latest `resetDatastore()`: records stamped at or before it no longer exist anywhere.
    public internal(set) var datastoreReset: Stamp?
    public internal(set) var parameters: [String: Versioned<JSONValue>] = [:]
    public internal(set) var tips: [String: TipRecord] = [:]
    public internal(set) var displays: [String: [DisplayCounter.Key: DisplayCounter]] = [:]
    public internal(set) var events: [String: EventRecord] = [:]
    /// Milliseconds since 1970 of the latest display of any tip on any device (display frequency).
    public internal(set) var lastDisplayAnywhere: Int64?

    public init() {}
}

extension ReplicaState {
    /// The stamp that began `tip`'s current display epoch: the latest of its `resetEligibility`,
    /// the datastore reset, and any epoch a device has already counted in.
    public func displayEpoch(of tip: String) -> Stamp? {
        var epoch = laterEpoch(tips[tip]?.resetStamp, datastoreReset)
        for key in displays[tip, default: [:]].keys { epoch = laterEpoch(epoch, key.epoch) }
        return epoch
    }

    /// Displays of `tip` summed over every device, in its current epoch.
    public func displayTotals(of tip: String) -> (count: Int64, duration: Double) {
        guard let counters = displays[tip] else { return (0, 0) }
        let epoch = displayEpoch(of: tip)
        var count: Int64 = 0
        var duration: Double = 0
        // Summed in device order (UTF-8 bytes): floating-point addition is not associative, and
        // dictionary order differs between replicas, so any other order could differ in the last bit.
        let current = counters.filter { $0.key.epoch == epoch }.sorted {
            $0.key.device.utf8.lexicographicallyPrecedes($1.key.device.utf8)
        }
        for (_, counter) in current {
            // Saturating: counts are client-supplied, and no client value may trap.
            let (sum, overflow) = count.addingReportingOverflow(counter.count)
            count = overflow ? (counter.count > 0 ? .max : .min) : sum
            duration += counter.duration
        }
        return (count, duration)
    }

    /// Whether `tip` has ever been displayed on any device (since the last datastore reset).
    public func hasDisplayed(_ tip: String) -> Bool {
        displays[tip].map { !$0.isEmpty } ?? false
    }

    /// This device's cumulative counter for `tip` in its current epoch.
    public func counter(of tip: String, device: String) -> (epoch: Stamp?, counter: DisplayCounter?) {
        let epoch = displayEpoch(of: tip)
        return (epoch, displays[tip]?[DisplayCounter.Key(device: device, epoch: epoch)])
    }

    /// The invalidation register's value, if a write survives the datastore reset.
    public func eligibility(of tip: String) -> EligibilityState? {
        tips[tip]?.eligibility?.value
    }

    /// A parameter's synced value, or `nil` when no surviving write exists.
    public func parameterValue(_ id: String) -> JSONValue? {
        parameters[id]?.value
    }

    /// The donations of `event`, oldest first.
    public func donations(of event: String) -> [Donation] {
        events[event]?.donations ?? []
    }
}

extension ReplicaState {
    /// Rebuilds a state from persisted records (a replica's tables), without re-merging.
    public init(
        datastoreReset: Stamp?, parameters: [String: Versioned<JSONValue>], tips: [String: TipRecord],
        displays: [String: [DisplayCounter.Key: DisplayCounter]], donations: [String: [Donation]],
        donationDeletions: [String: Stamp]
    ) {
        self.init()
        self.datastoreReset = datastoreReset
        self.parameters = parameters
        self.tips = tips
        self.displays = displays
        lastDisplayAnywhere = displays.values.flatMap(\.values).map(\.lastDisplayed).max()
        for (event, deletedAt) in donationDeletions { events[event, default: EventRecord()].deletedAt = deletedAt }
        for (event, list) in donations {
            var record = events[event] ?? EventRecord()
            for donation in list.sorted(by: Donation.precedes) { _ = record.insert(donation) }
            events[event] = record
        }
    }

    /// How long past `maximumAge` a donation is still stored: replicas whose clocks differ by less
    /// than this agree on what is visible at any instant after it is dropped.
    public static let donationAgeGraceMilliseconds: Int64 = 86_400_000

    /// Drops what an event's limit makes invisible for good at `nowMilliseconds`: donations outranked
    /// by `maximumCount` donations stamped no earlier (see ``EventRecord/pruneDominated(keeping:)``)
    /// and donations older than `maximumAge` plus a day's grace. Visible donations are chosen when
    /// read (``StatusEvaluator/donations(_:)``), so dropping these changes nothing anyone sees.
    public mutating func trimDonations(of event: String, to limit: DonationLimit, nowMilliseconds: Int64) {
        guard events[event] != nil else { return }
        if let maximum = limit.maximumCount { events[event]?.pruneDominated(keeping: maximum) }
        if let maximumAge = limit.maximumAge {
            let threshold = Int64(
                saturating: Double(nowMilliseconds) - maximumAge * 1000 - Double(Self.donationAgeGraceMilliseconds))
            if let oldest = events[event]?.donations.first, oldest.date < threshold {
                events[event]?.removeAll { $0.date < threshold }
            }
        }
    }
}
