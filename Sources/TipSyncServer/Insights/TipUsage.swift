import Foundation
import TipSyncCore

/// One account's use of one tip, as the tips page aggregates it: derived from the account's merged
/// state, computed by `TipSyncCore` from its log, the same merge every device runs.
public struct TipUsage: Sendable, Hashable {
    public var tip: String
    /// Why the tip is invalidated, or `nil`: the merged state's invalidation (`tipClosed`,
    /// `actionPerformed`), else the catalog's display limits as a device evaluates them
    /// (`displayCountExceeded`, `displayDurationExceeded`: never written to the log).
    public var reason: InvalidationReason?
    /// Displays summed over the account's devices in the tip's current display epoch.
    public var displays: Int64
    /// The earliest display any device reported (milliseconds since 1970). Kept across compaction,
    /// which may drop the change that first reported it.
    public var firstDisplayAt: Int64?
    /// When the winning invalidation was written (its HLC's milliseconds); for a display limit, the
    /// latest display of the tip's current epoch (the one that reached it).
    public var invalidatedAt: Int64?

    public init(
        tip: String, reason: InvalidationReason?, displays: Int64, firstDisplayAt: Int64?, invalidatedAt: Int64?
    ) {
        self.tip = tip
        self.reason = reason
        self.displays = displays
        self.firstDisplayAt = firstDisplayAt
        self.invalidatedAt = invalidatedAt
    }

    /// Every tip the account's log mentions. `previous` is what was derived before (its earliest
    /// displays survive a compaction that dropped their changes). With a `catalog`, display limits
    /// count as the invalidations devices compute from them, with the same status evaluator.
    public static func derive(from changes: [Change], previous: [TipUsage] = [], catalog: Catalog? = nil)
        -> [TipUsage]
    {
        var state = ReplicaState()
        var firstDisplay: [String: Int64] = [:]
        var tips: Set<String> = []
        for change in changes {
            _ = state.apply(change)
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
                firstDisplayAt: firstDisplay[tip], invalidatedAt: invalidatedAt)
        }
    }
}

/// One tip across every account: what `/console/tips` shows.
public struct TipUsageTotals: Sendable, Hashable {
    public var tip: String
    /// Accounts whose log mentions the tip.
    public var accounts: Int
    /// Accounts that displayed it at least once (current epoch).
    public var displayedAccounts: Int
    /// Accounts with the tip invalidated, by reason.
    public var invalidated: [InvalidationReason: Int]
    /// Accounts by displays: 0, 1, 2–3, 4–7, 8 or more.
    public var displayBuckets: [Int]
    /// Median milliseconds from the first display to the invalidation, over accounts with both.
    public var medianMillisecondsToInvalidation: Int64?
    /// Accounts whose tip was invalidated with `actionPerformed` (the feature used) at or after its
    /// first display: the tip was seen, then the feature used.
    public var usedAfterSeeing: Int
    /// Per UTC day (`2026-11-25`): accounts that first displayed the tip, closed it, used it.
    public var daily: [String: DailyCounts]

    /// One day of a tip's series.
    public struct DailyCounts: Sendable, Hashable {
        public var displayed = 0
        public var closed = 0
        public var used = 0

        public init(displayed: Int = 0, closed: Int = 0, used: Int = 0) {
            self.displayed = displayed
            self.closed = closed
            self.used = used
        }
    }

    /// `usedAfterSeeing` as a share of the accounts that displayed the tip (0 when none did).
    public var usedAfterSeeingShare: Double {
        displayedAccounts == 0 ? 0 : Double(usedAfterSeeing) / Double(displayedAccounts)
    }

    public init(
        tip: String, accounts: Int, displayedAccounts: Int, invalidated: [InvalidationReason: Int],
        displayBuckets: [Int], medianMillisecondsToInvalidation: Int64?, usedAfterSeeing: Int = 0,
        daily: [String: DailyCounts] = [:]
    ) {
        self.usedAfterSeeing = usedAfterSeeing
        self.daily = daily
        self.tip = tip
        self.accounts = accounts
        self.displayedAccounts = displayedAccounts
        self.invalidated = invalidated
        self.displayBuckets = displayBuckets
        self.medianMillisecondsToInvalidation = medianMillisecondsToInvalidation
    }

    public static let bucketLabels = ["0", "1", "2–3", "4–7", "8+"]
}

extension TipUsage {
    /// The counters this account's row adds to its tip's totals (``TipUsageCounters``): one per
    /// account, one if displayed, one for its invalidation reason, one display bucket, and one
    /// bucket of the time from first display to invalidation.
    var counters: [String] {
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

/// Per-tip totals kept by deltas: when an account's tip usage is replaced, its old rows' counters
/// are subtracted and the new rows' added, in the same transaction; an erasure subtracts. The tips
/// page then reads a few rows per tip instead of aggregating every account's.
enum TipUsageCounters {
    /// Counter deltas, by tip and counter name, for replacing `old` rows with `new` ones.
    static func deltas(replacing old: [TipUsage], with new: [TipUsage]) -> [TipCounterKey: Int64] {
        var deltas: [TipCounterKey: Int64] = [:]
        for row in old { for name in row.counters { deltas[TipCounterKey(tip: row.tip, name: name), default: 0] -= 1 } }
        for row in new { for name in row.counters { deltas[TipCounterKey(tip: row.tip, name: name), default: 0] += 1 } }
        return deltas.filter { $0.value != 0 }
    }

    /// The UTC day of a time in milliseconds, as `YYYY-MM-DD`.
    static func day(_ milliseconds: Int64) -> String {
        let days = Int64((Double(milliseconds) / 86_400_000).rounded(.down))
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm): no calendar, no locale.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))"
    }

    /// 0, 1, 2–3, 4–7, 8 or more displays.
    static func displayBucket(_ displays: Int64) -> Int {
        switch displays {
        case ...0: 0
        case 1: 1
        case 2...3: 2
        case 4...7: 3
        default: 4
        }
    }

    /// Quarter-octave buckets of milliseconds: bucket b holds [2^(b/4), 2^((b+1)/4)), so a median
    /// read from them is within 10% of the exact one.
    static func durationBucket(_ milliseconds: Int64) -> Int {
        milliseconds < 1 ? 0 : Int((log2(Double(milliseconds)) * 4).rounded(.down)) + 1
    }

    /// The middle of a bucket (geometric), in milliseconds.
    static func durationOfBucket(_ bucket: Int) -> Int64 {
        bucket == 0 ? 0 : Int64(pow(2, (Double(bucket - 1) + 0.5) / 4).rounded())
    }

    /// One tip's totals from its counters.
    static func totals(tip: String, counters: [String: Int64]) -> TipUsageTotals {
        var invalidated: [InvalidationReason: Int] = [:]
        for reason in InvalidationReason.allCases {
            if let count = counters["reason:\(reason.rawValue)"], count > 0 { invalidated[reason] = Int(count) }
        }
        var durations: [(bucket: Int, count: Int64)] = counters.compactMap { name, count in
            guard name.hasPrefix("took:"), let bucket = Int(name.dropFirst(5)), count > 0 else { return nil }
            return (bucket, count)
        }
        durations.sort { $0.bucket < $1.bucket }
        var median: Int64?
        let total = durations.reduce(0) { $0 + $1.count }
        var seen: Int64 = 0
        for (bucket, count) in durations {
            seen += count
            if seen > total / 2 {
                median = durationOfBucket(bucket)
                break
            }
        }
        var daily: [String: TipUsageTotals.DailyCounts] = [:]
        for (name, count) in counters where name.hasPrefix("day:") && count > 0 {
            let parts = name.split(separator: ":")
            guard parts.count == 3 else { continue }
            let day = String(parts[2])
            switch parts[1] {
            case "displayed": daily[day, default: .init()].displayed = Int(count)
            case "closed": daily[day, default: .init()].closed = Int(count)
            case "used": daily[day, default: .init()].used = Int(count)
            default: break
            }
        }
        return TipUsageTotals(
            tip: tip, accounts: Int(counters["accounts"] ?? 0), displayedAccounts: Int(counters["displayed"] ?? 0),
            invalidated: invalidated, displayBuckets: (0..<5).map { Int(counters["displays:\($0)"] ?? 0) },
            medianMillisecondsToInvalidation: median, usedAfterSeeing: Int(counters["usedAfterSeeing"] ?? 0),
            daily: daily)
    }

    /// Totals of every tip with any account, by tip id, from `(tip, name, count)` rows.
    static func totals(rows: [(tip: String, name: String, count: Int64)]) -> [TipUsageTotals] {
        var byTip: [String: [String: Int64]] = [:]
        for row in rows { byTip[row.tip, default: [:]][row.name] = row.count }
        return byTip.keys.sorted().compactMap { tip in
            let counters = byTip[tip]!
            return (counters["accounts"] ?? 0) > 0 ? totals(tip: tip, counters: counters) : nil
        }
    }
}

/// One counter of one tip.
struct TipCounterKey: Hashable {
    var tip: String
    var name: String
}
