import Logging
package import TipSyncCore
package import TipSyncStorage

/// Tip usage as the console shows it, derived from an account's whole log with `TipSyncCore` (the
/// devices' merge and rules) and stored: the one place it is derived, whoever asks — the background
/// ``TipUsageSummarizer``, compaction (before it drops the change that reported a first display), a
/// command reading results.
package struct TipUsageDerivation: Sendable {
    /// Reads the log and the catalog, stores the usage: needs the log, the insights and the
    /// account's name, so the whole store.
    package let store: any SyncStore

    package init(_ store: any SyncStore) {
        self.store = store
    }

    /// Derives the account's tip usage from its whole log with `TipSyncCore` and stores it. Runs
    /// before every compaction (which may drop the change that reported a tip's first display) and
    /// for every account whose log grew, in the background (``TipUsageSummarizer``).
    package func summarizeTipUsage(account: Int64) async throws {
        var changes: [Change] = []
        let through = try await store.forEachChange(account: account) { changes.append($0) }
        try await saveTipUsage(derivedFrom: changes, account: account, through: through)
    }

    /// Derives and stores the account's tip usage from its log read through `position` (in log
    /// order). Compaction calls it with the entries it has just read, before it drops any.
    package func saveTipUsage(derivedFrom changes: [Change], account: Int64, through position: Int64) async throws {
        // The catalog's display limits count as devices count them (a catalog that no longer reads: none).
        let catalog = try await store.catalogJSON().flatMap { try? Catalog(validating: Array($0.utf8)) }
        let usage = TipUsage.derive(
            from: changes, previous: try await store.tipUsage(account: account), catalog: catalog,
            account: try await store.accountName(id: account))
        _ = try await store.saveTipUsage(usage, account: account, through: position)
    }

    /// Derives the tip usage of every account whose log grew since its last summary, now: what a
    /// command reading results from the database does first, so it answers as of this moment
    /// whether or not a server runs. Returns how many accounts it summarized.
    @discardableResult
    package func summarizeAccountsWithNewChanges() async throws -> Int {
        try await TipUsageSummarizer(store: store, interval: .seconds(3600), logger: Logger(label: "tipsync-summary"))
            .summarizePending()
    }
}
