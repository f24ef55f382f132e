import TipSyncCore
import TipSyncServerBasics

/// What the console reads beyond the log: tip usage (kept by `TipUsageSummarizer`, shown by the
/// tips page), the overview's counts, and the uploaded catalog.
package protocol InsightStore: Sendable {
    /// Accounts whose log grew since their tip usage was last derived: at most `limit`, with ids
    /// above `after`, in id order (so a pass reaches every account, however busy the first ones are).
    func accountsWithNewChanges(after: Int64, limit: Int) async throws -> [Int64]
    /// The account's tip usage as last derived.
    func tipUsage(account: Int64) async throws -> [TipUsage]
    /// Replaces the account's tip usage, derived from its log through `position`; `false` (and
    /// nothing stored) when the account no longer exists.
    func saveTipUsage(_ usage: [TipUsage], account: Int64, through position: Int64) async throws -> Bool
    /// One tip's usage in every account (its page splits it by catalog version).
    func tipUsage(tip: String) async throws -> [TipUsage]
    /// Every account reached by an experiment (protocol.md §13.12) with its row, by account name.
    func experimentParticipants(experiment: String) async throws -> [(account: String, usage: TipUsage)]
    /// Every tip across all accounts, by tip id.
    func tipUsageTotals() async throws -> [TipUsageTotals]
    /// Counts and sizes for the console's overview.
    func overview() async throws -> StoreOverview
    /// The uploaded tip catalog's JSON (`tipsync-server catalog put`), if any: the console shows
    /// its titles and each tip's status.
    func catalogJSON() async throws -> String?
    /// Stores the catalog's JSON (already validated and checked against the current one) as its
    /// newest version, uploaded by `uploadedBy` at `now` (`restoredFrom`: the version it restores),
    /// and makes it the current one; every account's tip usage is derived again with it, and every
    /// instance is told (``StoreEvent/catalog``). Returns the new version number. Callers use
    /// ``putCatalogJSON(_:uploadedBy:at:restoredFrom:)``, which checks first.
    func insertCatalogVersion(_ text: String, uploadedBy: String, at now: Int64, restoredFrom: Int64?) async throws
        -> Int64
    /// Every stored catalog version, newest first.
    func catalogVersions() async throws -> [CatalogVersionRecord]
    /// The newest catalog version's number (`nil`: none stored): one cheap read, which
    /// ``CatalogWatch`` repeats to notice catalogs stored by another process.
    func latestCatalogVersion() async throws -> Int64?
}
