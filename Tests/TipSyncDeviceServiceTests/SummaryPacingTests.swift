import Logging
import Synchronization
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// The background tip-usage summary re-reads an account's whole log: an account whose summary is
/// long (a large log) waits in proportion before the next, so a busy large account cannot keep the
/// server deriving it over and over.
@Suite struct SummaryPacingTests {
    /// A clock that moves only when told, and by `tick` whenever it is read (a summary "takes" time).
    final class ManualClock: Sendable {
        let start = ContinuousClock.now
        private let offset = Mutex<Duration>(.zero)
        let tick: Duration

        init(tick: Duration) { self.tick = tick }

        func now() -> ContinuousClock.Instant {
            offset.withLock { offset in
                defer { offset += tick }
                return start + offset
            }
        }

        func advance(by duration: Duration) { offset.withLock { $0 += duration } }
    }

    @Test func anAccountWaitsInProportionToItsLastSummary() {
        let pacing = SummaryPacing(share: 0.02)
        let start = ContinuousClock.now
        #expect(pacing.allows(7, at: start))
        pacing.summarized(7, took: .milliseconds(10), at: start)
        // 10 ms at 2% of a core: the next summary of account 7 no sooner than 500 ms later.
        #expect(!pacing.allows(7, at: start + .milliseconds(499)))
        #expect(pacing.allows(8, at: start + .milliseconds(1)))
        #expect(pacing.allows(7, at: start + .milliseconds(500)))
    }

    @Test(arguments: Backend.allCases)
    func aGrownAccountIsSummarizedAgainOnlyOnceItsTurnComes(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let ann = try await phoneAccount(store, "ann")
            _ = try await store.push(
                [change("phone", 1, .eligibility(tip: "t", state: .invalidated(.tipClosed)))], from: ann)
            // Every summary takes 10 ms by this clock (it is read before and after).
            let clock = ManualClock(tick: .milliseconds(10))
            let summarizer = TipUsageSummarizer(
                store: store, interval: .seconds(2), logger: Logger(label: "test"), now: clock.now)
            #expect(try await summarizer.summarizePending() == 1)
            _ = try await store.push(
                [change("phone", 2, .eligibility(tip: "t", state: .invalidated(.actionPerformed)))], from: ann)
            // Its log grew, but its turn has not come: it stays pending.
            #expect(try await summarizer.summarizePending() == 0)
            #expect(try await store.accountsWithNewChanges(after: 0, limit: 10) == [ann.accountID])
            clock.advance(by: .seconds(1))
            #expect(try await summarizer.summarizePending() == 1)
            #expect(try await store.tipUsageTotals().first?.invalidated == [.actionPerformed: 1])
        }
    }
}
