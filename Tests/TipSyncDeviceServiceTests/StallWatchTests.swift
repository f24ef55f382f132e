import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import TipSyncDeviceService

/// The stall bound's clock (``StallWatch``): a write that waits a whole timeout for its client ends
/// the stream, writes that finish in time never do, and each write is timed from its own start —
/// with at most one timer pending per stream and none ever cancelled (issue 77: cancelling a timer
/// per write scanned every task scheduled on the loop).
@Suite struct StallWatchTests {
    final class Stalls: Sendable {
        let count = Atomic(0)
    }

    func watch(_ loop: EmbeddedEventLoop, _ stalls: Stalls) -> StallWatch {
        StallWatch(timeout: .seconds(30), loop: loop) { stalls.count.add(1, ordering: .relaxed) }
    }

    @Test func aWriteThatWaitsAWholeTimeoutEndsTheStreamOnce() {
        let loop = EmbeddedEventLoop()
        let stalls = Stalls()
        let watch = watch(loop, stalls)
        watch.writeBegan()
        loop.advanceTime(by: .seconds(29))
        #expect(stalls.count.load(ordering: .relaxed) == 0)
        loop.advanceTime(by: .seconds(1))
        #expect(stalls.count.load(ordering: .relaxed) == 1)
        loop.advanceTime(by: .seconds(120))
        #expect(stalls.count.load(ordering: .relaxed) == 1)
    }

    @Test func writesThatFinishInTimeNeverStallAndEachIsTimedFromItsOwnStart() {
        let loop = EmbeddedEventLoop()
        let stalls = Stalls()
        let watch = watch(loop, stalls)
        // A thousand pages written at once, each read at once: one timer, which lapses.
        for _ in 0..<1000 {
            watch.writeBegan()
            watch.writeEnded()
        }
        loop.advanceTime(by: .seconds(300))
        #expect(stalls.count.load(ordering: .relaxed) == 0)
        // A write that begins 20 s after the one that set the timer is bounded from its own start:
        // not ended at the first timer (30 s), ended at 20 + 30.
        watch.writeBegan()
        watch.writeEnded()
        loop.advanceTime(by: .seconds(20))
        watch.writeBegan()
        loop.advanceTime(by: .seconds(10))
        #expect(stalls.count.load(ordering: .relaxed) == 0)
        loop.advanceTime(by: .seconds(19))
        #expect(stalls.count.load(ordering: .relaxed) == 0)
        loop.advanceTime(by: .seconds(1))
        #expect(stalls.count.load(ordering: .relaxed) == 1)
    }

    @Test func aStreamThatIsGoneLeavesItsTimerNothingToDo() {
        let loop = EmbeddedEventLoop()
        let stalls = Stalls()
        var watch: StallWatch? = watch(loop, stalls)
        watch?.writeBegan()
        weak let gone = watch
        watch = nil
        #expect(gone == nil)  // the pending timer holds it weakly
        loop.advanceTime(by: .seconds(60))
        #expect(stalls.count.load(ordering: .relaxed) == 0)
    }
}
