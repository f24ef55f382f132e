import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// How soon an account's tip usage may be derived again. A summary re-reads the account's whole log,
/// so an account whose last summary took `d` waits `d / share` after it before the next: however
/// large and busy an account is, re-deriving it uses at most about `share` of one core. Small
/// accounts (a summary of a few milliseconds at most) are summarized on every pass, as before.
package final class SummaryPacing: Sendable {
    /// The most of one core's time the summaries of one account may use.
    let share: Double
    private let state = Mutex(State())

    private struct State {
        var earliest: [Int64: ContinuousClock.Instant] = [:]
        /// When `earliest` reaches this size, the times already past are dropped (amortized).
        var pruneAt = 1024
    }

    package init(share: Double = 0.02) {
        precondition(share > 0 && share <= 1)
        self.share = share
    }

    /// Whether the account may be summarized at `now`.
    package func allows(_ account: Int64, at now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            guard let next = state.earliest[account] else { return true }
            return next <= now
        }
    }

    /// The account's summary ended at `now` and took `took`.
    package func summarized(_ account: Int64, took: Duration, at now: ContinuousClock.Instant) {
        let next = now + took / share
        state.withLock { state in
            state.earliest[account] = next
            if state.earliest.count >= state.pruneAt {
                state.earliest = state.earliest.filter { $0.value > now }
                state.pruneAt = max(1024, state.earliest.count * 2)
            }
        }
    }
}
