import Logging
import ServiceLifecycle
import Synchronization
import TipSyncCore

extension SyncStore {
    /// Derives the account's tip usage from its whole log with `TipSyncCore` and stores it. Runs
    /// before every compaction (which may drop the change that reported a tip's first display) and
    /// for every account whose log grew, in the background (``TipUsageSummarizer``).
    public func summarizeTipUsage(account: Int64) async throws {
        var changes: [Change] = []
        var cursor: Int64 = 0
        while true {
            let page = try await pull(account: account, after: cursor, limit: 5000)
            for body in page.bodies { changes.append(try JSONCoding.decode(Change.self, from: body.utf8)) }
            cursor = page.cursor
            if !page.more { break }
        }
        let usage = TipUsage.derive(from: changes, previous: try await tipUsage(account: account))
        _ = try await saveTipUsage(usage, account: account, through: cursor)
    }
}

/// Keeps every account's tip usage (the console's tips page) up to date: every `interval` it
/// derives it again for the accounts whose log grew since, so the page lags pushes by at most about
/// one interval and never reads a log when it is viewed.
struct TipUsageSummarizer: Service {
    let store: any SyncStore
    let interval: Duration
    let board: TipUsageBoard
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let summarized = try await summarizePending()
                    if summarized > 0 || board.isOlder(than: .seconds(60)) { try await board.refresh(store) }
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("tip usage summary failed: \(error)")
                }
                try await Task.sleep(for: interval)
            }
        }
    }

    /// Summarizes every account whose log grew, 100 at a time; how many it summarized.
    @discardableResult
    func summarizePending() async throws -> Int {
        var seen: Set<Int64> = []
        while true {
            let accounts = try await store.accountsWithNewChanges(limit: 100).filter { !seen.contains($0) }
            if accounts.isEmpty { return seen.count }
            for account in accounts {
                try Task.checkCancellation()
                seen.insert(account)
                try await store.summarizeTipUsage(account: account)
            }
        }
    }
}

/// The tips page's figures, kept ready: aggregating every account's tip usage takes a few hundred
/// milliseconds at 100,000 accounts, so ``TipUsageSummarizer`` recomputes it after each pass that
/// changed something (and at least once a minute), and a page view only reads it. An erasure on
/// this instance marks it stale, so the next view recomputes.
final class TipUsageBoard: Sendable {
    private let state = Mutex<(totals: [TipUsageTotals]?, refreshedAt: ContinuousClock.Instant?)>((nil, nil))

    /// The figures, recomputed now if there are none yet or they were marked stale.
    func totals(_ store: any SyncStore) async throws -> [TipUsageTotals] {
        if let totals = state.withLock({ $0.totals }) { return totals }
        return try await refresh(store)
    }

    @discardableResult
    func refresh(_ store: any SyncStore) async throws -> [TipUsageTotals] {
        let totals = try await store.tipUsageTotals()
        state.withLock { $0 = (totals, ContinuousClock.now) }
        return totals
    }

    func markStale() {
        state.withLock { $0.totals = nil }
    }

    /// Whether the figures are older than `age` (or missing).
    func isOlder(than age: Duration) -> Bool {
        state.withLock { state in state.refreshedAt.map { ContinuousClock.now - $0 > age } ?? true }
    }
}
