import TipSyncCore

/// One account's use of one tip, as the tips page aggregates it: derived from the account's merged
/// state, computed by `TipSyncCore` from its log, the same merge every device runs.
public struct TipUsage: Sendable, Hashable {
    public var tip: String
    /// Why the tip is invalidated in the merged state (`tipClosed`, `actionPerformed`, …), or `nil`.
    public var reason: InvalidationReason?
    /// Displays summed over the account's devices in the tip's current display epoch.
    public var displays: Int64
    /// The earliest display any device reported (milliseconds since 1970). Kept across compaction,
    /// which may drop the change that first reported it.
    public var firstDisplayAt: Int64?
    /// When the winning invalidation was written (its HLC's milliseconds).
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
    /// displays survive a compaction that dropped their changes).
    public static func derive(from changes: [Change], previous: [TipUsage] = []) -> [TipUsage] {
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
        return tips.sorted().map { tip in
            let eligibility = state.tips[tip]?.eligibility
            var reason: InvalidationReason?
            if case .invalidated(let why) = eligibility?.value { reason = why }
            return TipUsage(
                tip: tip, reason: reason, displays: state.displayTotals(of: tip).count,
                firstDisplayAt: firstDisplay[tip],
                invalidatedAt: reason == nil ? nil : eligibility.map { Int64(clamping: $0.stamp.hlc.milliseconds) })
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

    public init(
        tip: String, accounts: Int, displayedAccounts: Int, invalidated: [InvalidationReason: Int],
        displayBuckets: [Int], medianMillisecondsToInvalidation: Int64?
    ) {
        self.tip = tip
        self.accounts = accounts
        self.displayedAccounts = displayedAccounts
        self.invalidated = invalidated
        self.displayBuckets = displayBuckets
        self.medianMillisecondsToInvalidation = medianMillisecondsToInvalidation
    }

    public static let bucketLabels = ["0", "1", "2–3", "4–7", "8+"]
}

extension TipUsageTotals {
    /// The aggregate both backends run over `tip_usage`: one row per tip with `accounts, displayed,`
    /// then one count per ``InvalidationReason/allCases`` and one per display bucket.
    static func aggregateSQL(displays: String, reason: String) -> String {
        let reasons = InvalidationReason.allCases.map {
            "SUM(CASE WHEN \(reason) = '\($0.rawValue)' THEN 1 ELSE 0 END)"
        }
        let buckets = [
            "\(displays) <= 0", "\(displays) = 1", "\(displays) BETWEEN 2 AND 3", "\(displays) BETWEEN 4 AND 7",
            "\(displays) >= 8",
        ].map { "SUM(CASE WHEN \($0) THEN 1 ELSE 0 END)" }
        return "SELECT tip, COUNT(*), SUM(CASE WHEN \(displays) > 0 THEN 1 ELSE 0 END), "
            + (reasons + buckets).joined(separator: ", ") + " FROM tip_usage GROUP BY tip ORDER BY tip"
    }

    /// Builds the totals from ``aggregateSQL(displays:reason:)``'s rows (`counts`: every column after
    /// the tip) and each tip's sorted times from first display to invalidation.
    static func make(tip: String, counts: [Int64], durations: [Int64]) -> TipUsageTotals {
        let reasons = InvalidationReason.allCases
        var invalidated: [InvalidationReason: Int] = [:]
        for (index, reason) in reasons.enumerated() where counts[2 + index] > 0 {
            invalidated[reason] = Int(counts[2 + index])
        }
        return TipUsageTotals(
            tip: tip, accounts: Int(counts[0]), displayedAccounts: Int(counts[1]), invalidated: invalidated,
            displayBuckets: counts[(2 + reasons.count)...].map { Int($0) },
            medianMillisecondsToInvalidation: durations.isEmpty ? nil : durations[durations.count / 2])
    }
}
