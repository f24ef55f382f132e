package import Logging
import ServiceLifecycle
import TipSyncCore
import TipSyncServerBasics
package import TipSyncStorage

extension SyncStore {
    /// Derives the account's tip usage from its whole log with `TipSyncCore` and stores it. Runs
    /// before every compaction (which may drop the change that reported a tip's first display) and
    /// for every account whose log grew, in the background (``TipUsageSummarizer``).
    package func summarizeTipUsage(account: Int64) async throws {
        var changes: [Change] = []
        let through = try await forEachChange(account: account) { changes.append($0) }
        try await saveTipUsage(derivedFrom: changes, account: account, through: through)
    }

    /// Derives and stores the account's tip usage from its log read through `position` (in log
    /// order). Compaction calls it with the entries it has just read, before it drops any.
    func saveTipUsage(derivedFrom changes: [Change], account: Int64, through position: Int64) async throws {
        // The catalog's display limits count as devices count them (a catalog that no longer reads: none).
        let catalog = try await catalogJSON().flatMap { try? Catalog(validating: Array($0.utf8)) }
        let usage = TipUsage.derive(
            from: changes, previous: try await tipUsage(account: account), catalog: catalog,
            account: try await accountName(id: account))
        _ = try await saveTipUsage(usage, account: account, through: position)
    }
}

extension SyncStore {
    /// Derives the tip usage of every account whose log grew since its last summary, now: what a
    /// command reading results from the database does first, so it answers as of this moment
    /// whether or not a server runs. Returns how many accounts it summarized.
    @discardableResult
    package func summarizeAccountsWithNewChanges() async throws -> Int {
        try await TipUsageSummarizer(store: self, interval: .seconds(3600), logger: Logger(label: "tipsync-summary"))
            .summarizePending()
    }
}

/// Keeps every account's tip usage (the console's tips page) up to date: every `interval` it
/// derives it again for the accounts whose log grew since, so the page lags pushes by about one
/// interval and never reads a log when it is viewed. An account whose summary takes long (a large
/// log) waits in proportion before its next one (``SummaryPacing``): its page lags more, and the
/// server does not spend its time re-reading one busy account's log every interval.
package struct TipUsageSummarizer: Service {
    let store: any SyncStore
    let interval: Duration
    let logger: Logger
    /// Told of every summary: the work warms caches the server releases once quiet.
    var memory: MemoryRelease? = nil
    var pacing = SummaryPacing()
    /// The clock summaries are timed with (tests move it by hand).
    var now: @Sendable () -> ContinuousClock.Instant = { .now }

    package init(
        store: any SyncStore, interval: Duration, logger: Logger, memory: MemoryRelease? = nil,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.store = store
        self.interval = interval
        self.logger = logger
        self.memory = memory
        self.now = now
    }

    package func run() async throws {
        await Periodic.run(every: interval, immediately: true) {
            do {
                try await summarizePending()
            } catch is CancellationError {
            } catch {
                logger.warning("tip usage summary failed: \(error)")
            }
        }
    }

    /// Summarizes every account whose log grew and whose turn has come (the others stay pending),
    /// 100 at a time in id order; how many it summarized.
    @discardableResult
    package func summarizePending() async throws -> Int {
        var after: Int64 = 0
        var summarized = 0
        while true {
            let accounts = try await store.accountsWithNewChanges(after: after, limit: 100)
            guard let last = accounts.last else { return summarized }
            for account in accounts where pacing.allows(account, at: now()) {
                try Task.checkCancellation()
                let started = now()
                try await store.summarizeTipUsage(account: account)
                let finished = now()
                pacing.summarized(account, took: finished - started, at: finished)
                memory?.noteActivity()
                summarized += 1
            }
            after = last
        }
    }
}
