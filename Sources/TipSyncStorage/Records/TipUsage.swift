import Foundation
package import TipSyncCore
import TipSyncServerBasics

/// One account's use of one tip, as the tips page aggregates it: derived from the account's merged
/// state, computed by `TipSyncCore` from its log, the same merge every device runs.
package struct TipUsage: Sendable, Hashable {
    package var tip: String
    /// Why the tip is invalidated, or `nil`: the merged state's invalidation (`tipClosed`,
    /// `actionPerformed`), else the catalog's display limits as a device evaluates them
    /// (`displayCountExceeded`, `displayDurationExceeded`: never written to the log).
    package var reason: InvalidationReason?
    /// Displays summed over the account's devices in the tip's current display epoch.
    package var displays: Int64
    /// The earliest display any device reported (milliseconds since 1970). Kept across compaction,
    /// which may drop the change that first reported it.
    package var firstDisplayAt: Int64?
    /// When the winning invalidation was written (its HLC's milliseconds); for a display limit, the
    /// latest display of the tip's current epoch (the one that reached it).
    package var invalidatedAt: Int64?
    /// The account in the tip's experiment (protocol.md §13.12), once reached; else `nil`.
    package var experiment: ExperimentParticipation?

    package init(
        tip: String, reason: InvalidationReason?, displays: Int64, firstDisplayAt: Int64?, invalidatedAt: Int64?,
        experiment: ExperimentParticipation? = nil
    ) {
        self.tip = tip
        self.reason = reason
        self.displays = displays
        self.firstDisplayAt = firstDisplayAt
        self.invalidatedAt = invalidatedAt
        self.experiment = experiment
    }

    /// Every tip the account's log mentions. `previous` is what was derived before (its earliest
    /// displays survive a compaction that dropped their changes). With a `catalog`, display limits
    /// count as the invalidations devices compute from them, with the same status evaluator, and
    /// with the `account`'s name each experiment of the catalog gets its participation.
    package static func derive(
        from changes: [Change], previous: [TipUsage] = [], catalog: Catalog? = nil, account: String? = nil
    ) -> [TipUsage] {
        var state = ReplicaState()
        // The log at once, as a device merges a pull page (donations sorted and merged per event).
        _ = state.apply(changes)
        var firstDisplay: [String: Int64] = [:]
        var tips: Set<String> = []
        for change in changes {
            switch change.operation {
            case .eligibility(let tip, _):
                tips.insert(tip)
            case .display(let tip, _, let count, _, let lastDisplayed):
                tips.insert(tip)
                if count > 0 { firstDisplay[tip] = min(firstDisplay[tip] ?? .max, lastDisplayed) }
            default: break
            }
        }
        for usage in previous {
            tips.insert(usage.tip)
            if let earliest = usage.firstDisplayAt {
                firstDisplay[usage.tip] = min(firstDisplay[usage.tip] ?? .max, earliest)
            }
        }
        var participations: [String: ExperimentParticipation] = [:]
        if let account {
            let before = Dictionary(previous.map { ($0.tip, $0.experiment) }) { first, _ in first }
            for tip in catalog?.tips ?? [] {
                if let participation = ExperimentParticipation.derive(
                    tip: tip, account: account, state: state, previous: before[tip.id] ?? nil)
                {
                    participations[tip.id] = participation
                    tips.insert(tip.id)
                }
            }
        }
        // Only steps 2 and 3 of "Status" are read (invalidations), which do not depend on the instant.
        let evaluator = catalog.map { StatusEvaluator(state: state, catalog: $0, now: 0) }
        let definitions = Dictionary((catalog?.tips ?? []).map { ($0.id, $0) }) { first, _ in first }
        return tips.sorted().map { tip in
            let eligibility = state.tips[tip]?.eligibility
            var reason: InvalidationReason?
            var invalidatedAt: Int64?
            if case .invalidated(let why) = eligibility?.value {
                reason = why
                invalidatedAt = eligibility.map { Int64(clamping: $0.stamp.hlc.milliseconds) }
            } else if let definition = definitions[tip], case .invalidated(let why)? = evaluator?.status(of: definition)
            {
                reason = why
                let epoch = state.displayEpoch(of: tip)
                invalidatedAt = state.displays[tip]?.filter { $0.key.epoch == epoch }.map(\.value.lastDisplayed).max()
            }
            return TipUsage(
                tip: tip, reason: reason, displays: state.displayTotals(of: tip).count,
                firstDisplayAt: firstDisplay[tip], invalidatedAt: invalidatedAt, experiment: participations[tip])
        }
    }
}

extension TipUsage {
    /// The counters this account's row adds to its tip's totals (``TipUsageCounters``): one per
    /// account, one if displayed, one for its invalidation reason, one display bucket, and one
    /// bucket of the time from first display to invalidation.
    package var counters: [String] {
        var names = ["accounts", "displays:\(TipUsageCounters.displayBucket(displays))"]
        if displays > 0 { names.append("displayed") }
        if let reason { names.append("reason:\(reason.rawValue)") }
        if reason != nil, let first = firstDisplayAt, let invalidated = invalidatedAt, invalidated >= first {
            names.append("took:\(TipUsageCounters.durationBucket(invalidated - first))")
            if reason == .actionPerformed { names.append("usedAfterSeeing") }
        }
        if let first = firstDisplayAt { names.append("day:displayed:\(TipUsageCounters.day(first))") }
        if let invalidated = invalidatedAt {
            switch reason {
            case .tipClosed: names.append("day:closed:\(TipUsageCounters.day(invalidated))")
            case .actionPerformed: names.append("day:used:\(TipUsageCounters.day(invalidated))")
            default: break
            }
        }
        return names
    }
}
