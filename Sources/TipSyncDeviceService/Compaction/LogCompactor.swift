import TipSyncCore
import TipSyncServerBasics
package import TipSyncStorage

/// Compacting one account's log (protocol.md §8), the same on every backend: read the log without
/// holding the account, derive the account's tip usage from those entries first (it remembers first
/// displays a drop would lose), decide with the core's ``TipSyncCore/LogCompaction/superseded(_:)``,
/// and drop in short transactions of ``chunk`` entries each — so a push to the account waits at most
/// for one chunk — unless another compaction or an erasure deleted entries in between, in which case
/// it decides again on what is there now. Backends only read and drop
/// (``ChangeLogStore/logEntries(account:)``, ``ChangeLogStore/dropCompacted(_:account:through:expecting:)``).
package struct LogCompactor: Sendable {
    /// Superseded entries deleted per write transaction: a push to the account waits for one
    /// chunk's delete, never for the whole compaction.
    package static let chunk = 1000

    let store: any SyncStore

    package init(store: any SyncStore) {
        self.store = store
    }

    /// Drops the account's superseded log entries and records when. Returns how many.
    package func compact(account: Int64) async throws -> Int {
        var droppedInAll = 0
        while true {
            let entries = try await store.logEntries(account: account)
            let through = entries.last?.position ?? 0
            try await TipUsageDerivation(store).saveTipUsage(
                derivedFrom: entries.map(\.change), account: account, through: through)
            let dropped = LogCompaction.superseded(entries).sorted()
            var remaining = entries.count
            var interrupted = false
            // At least one transaction, so an empty decision still records the compaction.
            for start in stride(from: 0, through: max(dropped.count - 1, 0), by: Self.chunk) {
                let part = Array(dropped[min(start, dropped.count)..<min(start + Self.chunk, dropped.count)])
                guard try await store.dropCompacted(part, account: account, through: through, expecting: remaining)
                else {
                    interrupted = true
                    break
                }
                remaining -= part.count
                droppedInAll += part.count
            }
            if !interrupted {
                try await keepState(account: account)
                return droppedInAll
            }
        }
    }

    /// Keeps the account's state, as compacted, compressed for new devices (``KeptStatePage``):
    /// its full pages from the beginning, read in one transaction, each compressed once. Keeps
    /// nothing if the account was compacted again or erased meanwhile (that compaction keeps its own).
    /// Returns how many pages were kept.
    @discardableResult
    package func keepState(account: Int64) async throws -> Int {
        let state = try await store.statePages(account: account)
        var kept: [KeptStatePage] = []
        kept.reserveCapacity(state.pages.count)
        for page in state.pages {
            guard let segment = DeflatedSegment(compressing: page.changes.joined) else { return 0 }
            kept.append(
                KeptStatePage(
                    after: page.after, last: page.last, count: page.changes.count, endedByBytes: page.endedByBytes,
                    segment: segment))
        }
        return try await store.keepStatePages(kept, account: account, builtFor: state.builtFor) ? kept.count : 0
    }
}
