package import Logging
import ServiceLifecycle
import TipSyncCore
import TipSyncServerBasics
package import TipSyncStorage

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
                try await TipUsageDerivation(store).summarizeTipUsage(account: account)
                let finished = now()
                pacing.summarized(account, took: finished - started, at: finished)
                memory?.noteActivity()
                summarized += 1
            }
            after = last
        }
    }
}
