/// Which entries of a change log can be dropped without changing what any replica computes.
///
/// An entry is dropped only when kept entries subsume its effect under the merge rules, so a replica
/// that has seen every kept entry — in any order, from any cursor — holds the same state as one that
/// has seen the whole log:
/// - everything stamped at or before the latest `datastoreReset` (displays: epoch before it);
/// - parameters: all but the latest write per id;
/// - eligibility: all but the latest write and the latest `eligible` per tip (that one carries the reset stamp);
/// - displays: per (tip, device, epoch), all but the entries holding the largest `count`, `duration`
///   and `lastDisplayed` (merge keeps each field's maximum; a writer's totals are cumulative, so
///   usually one entry holds all three, but a client the protocol allows may send them otherwise);
/// - donations stamped at or before their event's latest `donationsDeleted`, and all but that deletion;
/// - donations no rule can ever see again: outranked by (date, id) by at least 1000 donations of their
///   event stamped no earlier (``DonationDominance``; a rule sees an event's newest 1000).
public enum LogCompaction {
    public struct Entry: Sendable, Hashable {
        public var position: Int64
        public var change: Change

        public init(position: Int64, change: Change) {
            self.position = position
            self.change = change
        }
    }

    /// Positions of superseded entries.
    public static func superseded(_ entries: [Entry]) -> Set<Int64> {
        var dropped = Set<Int64>()
        let reset = entries.compactMap { entry -> Stamp? in
            if case .datastoreReset = entry.change.operation { return entry.change.stamp }
            return nil
        }.max()

        // Keyed by UTF-8 bytes: ids are distinct by code points, and Swift's String equality would
        // treat canonically equivalent ids (`é`, `e` + U+0301) as one.
        var latestParameter: [[UInt8]: Entry] = [:]
        var latestEligibility: [[UInt8]: Entry] = [:]
        var latestEligible: [[UInt8]: Entry] = [:]
        var displays: [[UInt8]: [Entry]] = [:]
        var latestDeletion: [[UInt8]: Entry] = [:]
        var donations: [[UInt8]: [Entry]] = [:]

        func keepLatest(_ entry: Entry, in table: inout [[UInt8]: Entry], key: [UInt8]) {
            if let current = table[key] {
                if current.change.stamp < entry.change.stamp {
                    dropped.insert(current.position)
                    table[key] = entry
                } else {
                    dropped.insert(entry.position)
                }
            } else {
                table[key] = entry
            }
        }

        for entry in entries {
            let stamp = entry.change.stamp
            if case .datastoreReset = entry.change.operation {
                if stamp != reset { dropped.insert(entry.position) }
                continue
            }
            if case .display(let tip, let epoch, _, _, _) = entry.change.operation {
                if let reset, epochPrecedes(epoch, reset) {
                    dropped.insert(entry.position)
                } else {
                    let key = Array("\(tip)\u{0}\(entry.change.device)\u{0}\(epoch?.description ?? "")".utf8)
                    displays[key, default: []].append(entry)
                }
                continue
            }
            if let reset, stamp <= reset {
                dropped.insert(entry.position)
                continue
            }
            switch entry.change.operation {
            case .parameter(let id, _):
                keepLatest(entry, in: &latestParameter, key: Array(id.utf8))
            case .eligibility(let tipID, let state):
                let tip = Array(tipID.utf8)
                // Kept if it is the latest write or the latest `eligible`; decided after the scan.
                if state == .eligible {
                    if let current = latestEligible[tip], current.change.stamp > stamp {
                    } else {
                        latestEligible[tip] = entry
                    }
                }
                if let current = latestEligibility[tip], current.change.stamp > stamp {
                } else {
                    latestEligibility[tip] = entry
                }
            case .donation(let event, _, _, _):
                donations[Array(event.utf8), default: []].append(entry)
            case .donationsDeleted(let event):
                keepLatest(entry, in: &latestDeletion, key: Array(event.utf8))
            case .display, .datastoreReset:
                break
            }
        }
        let keptEligibility = Set(latestEligibility.values.map(\.position)).union(latestEligible.values.map(\.position))
        for entry in entries {
            if case .eligibility = entry.change.operation, !keptEligibility.contains(entry.position),
                !dropped.contains(entry.position)
            {
                dropped.insert(entry.position)
            }
        }
        for list in displays.values {
            var keep = Set<Int64>()
            func largest(_ value: (Change.Operation) -> Double) {
                // The first of the largest by position: every replica compacting the same log agrees.
                var best: (value: Double, position: Int64)?
                for entry in list {
                    let candidate = value(entry.change.operation)
                    if best.map({ candidate > $0.value }) ?? true { best = (candidate, entry.position) }
                }
                if let best { keep.insert(best.position) }
            }
            largest { if case .display(_, _, let count, _, _) = $0 { Double(count) } else { 0 } }
            largest { if case .display(_, _, _, let duration, _) = $0 { duration } else { 0 } }
            largest { if case .display(_, _, _, _, let last) = $0 { Double(last) } else { 0 } }
            for entry in list where !keep.contains(entry.position) { dropped.insert(entry.position) }
        }
        for (event, list) in donations {
            var survivors = list
            if let deletion = latestDeletion[event]?.change.stamp {
                for entry in list where entry.change.stamp <= deletion { dropped.insert(entry.position) }
                survivors.removeAll { $0.change.stamp <= deletion }
            }
            // Hidden for ever by the ceiling every rule has (protocol.md §4.5, §8 rule 9).
            guard survivors.count > StatusEvaluator.defaultQueryLimit else { continue }
            let ranked = survivors.compactMap { entry -> (donation: Donation, position: Int64)? in
                guard case .donation(_, let id, let date, _) = entry.change.operation else { return nil }
                return (Donation(id: id, date: date, info: nil, stamp: entry.change.stamp), entry.position)
            }.sorted { Donation.precedes($0.donation, $1.donation) }
            let hidden = DonationDominance.dominated(
                stampsInRankOrder: ranked.map(\.donation.stamp), keeping: StatusEvaluator.defaultQueryLimit)
            for index in hidden { dropped.insert(ranked[index].position) }
        }
        return dropped
    }
}
