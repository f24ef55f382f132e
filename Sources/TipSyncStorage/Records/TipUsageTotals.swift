import Foundation
package import TipSyncCore

/// One tip across every account: what `/console/tips` shows.
package struct TipUsageTotals: Sendable, Hashable {
    package var tip: String
    /// Accounts whose log mentions the tip.
    package var accounts: Int
    /// Accounts that displayed it at least once (current epoch).
    package var displayedAccounts: Int
    /// Accounts with the tip invalidated, by reason.
    package var invalidated: [InvalidationReason: Int]
    /// Accounts by displays: 0, 1, 2–3, 4–7, 8 or more.
    package var displayBuckets: [Int]
    /// Median milliseconds from the first display to the invalidation, over accounts with both.
    package var medianMillisecondsToInvalidation: Int64?
    /// Accounts whose tip was invalidated with `actionPerformed` (the feature used) at or after its
    /// first display: the tip was seen, then the feature used.
    package var usedAfterSeeing: Int
    /// Per UTC day (`2026-11-25`): accounts that first displayed the tip, closed it, used it.
    package var daily: [String: DailyCounts]

    /// One day of a tip's series.
    package struct DailyCounts: Sendable, Hashable {
        package var displayed = 0
        package var closed = 0
        package var used = 0

        package init(displayed: Int = 0, closed: Int = 0, used: Int = 0) {
            self.displayed = displayed
            self.closed = closed
            self.used = used
        }
    }

    /// `usedAfterSeeing` as a share of the accounts that displayed the tip (0 when none did).
    package var usedAfterSeeingShare: Double {
        displayedAccounts == 0 ? 0 : Double(usedAfterSeeing) / Double(displayedAccounts)
    }

    package init(
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

    package static let bucketLabels = ["0", "1", "2–3", "4–7", "8+"]
}
