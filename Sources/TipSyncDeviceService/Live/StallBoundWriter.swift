import CoreMetrics
import Hummingbird
import NIOCore
import NIOPosix
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// How long one write of a live stream may wait for its client to read, and what ends the
/// connection then (`--live-stall-timeout`).
package struct StallBound: Sendable {
    var timeout: Duration
    var closeConnection: @Sendable () -> Void
}

/// A live stream's writer whose every write must finish within the stall bound: a write waits while
/// the client does not read (the page stays in memory meanwhile), so one that has not finished in
/// time closes the connection, which fails the write and ends the stream. What one stream can hold
/// in memory is then about one page (``ChangeTexts/maxPageBytes``), for at most that long. Only
/// socket writes are timed, never the store reads between them.
struct StallBoundWriter: ResponseBodyWriter {
    var inner: any ResponseBodyWriter
    /// The stream's one watch over its writes.
    let watch: StallWatch

    mutating func write(_ buffer: ByteBuffer) async throws {
        watch.writeBegan()
        defer { watch.writeEnded() }
        try await inner.write(buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await inner.finish(trailingHeaders)
    }
}

/// The stall bound's clock for one stream: at most one timer pending, never cancelled.
///
/// A timer per write, cancelled when the write ended, cost the server a scan of every task scheduled
/// on the timer's event loop per write (NIO removes a cancelled task by searching its queue): 12% of
/// a restarted server's CPU while 18,000 streams wrote their `ready` (BENCHMARKS.md, "18,000
/// reference clients back within 15 s"), and the same for every page of a fan-out. Instead a write notes when it
/// began, and a timer is set only when none is pending; when it fires it closes the connection if
/// the write in progress began a whole timeout ago, sets itself again for the write in progress if
/// that one began later, and otherwise lapses. It holds the watch only weakly.
final class StallWatch: Sendable {
    private struct State {
        /// When the write in progress began (`nil`: none in progress).
        var writeBegan: NIODeadline?
        /// Whether a timer is pending.
        var timerSet = false
    }
    private let state = Mutex(State())
    private let timeout: TimeAmount
    private let loop: any EventLoop
    private let onStall: @Sendable () -> Void

    /// `loop` keeps the time and runs the timers (a shared loop, not the connection's: that one may
    /// be a test's embedded loop); `onStall` runs once a write has waited `timeout`.
    init(timeout: Duration, loop: any EventLoop, onStall: @escaping @Sendable () -> Void) {
        self.timeout = .nanoseconds(timeout.wholeNanoseconds)
        self.loop = loop
        self.onStall = onStall
    }

    /// ``StallBound``'s watch on a shared event loop, counting each stall in `stalled`.
    convenience init(_ stall: StallBound, stalled: CoreMetrics.Counter) {
        self.init(timeout: stall.timeout, loop: NIOSingletons.posixEventLoopGroup.any()) {
            stalled.increment()
            stall.closeConnection()
        }
    }

    func writeBegan() {
        let now = loop.now
        let set = state.withLock { state -> Bool in
            state.writeBegan = now
            defer { state.timerSet = true }
            return !state.timerSet
        }
        if set { setTimer(at: now + timeout) }
    }

    func writeEnded() {
        state.withLock { $0.writeBegan = nil }
    }

    private func setTimer(at deadline: NIODeadline) {
        loop.scheduleTask(deadline: deadline) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        enum Next {
            case lapse, stall
            case again(NIODeadline)
        }
        let now = loop.now
        let timeout = timeout
        let next = state.withLock { state -> Next in
            guard let began = state.writeBegan else {
                state.timerSet = false
                return .lapse
            }
            guard began + timeout <= now else { return .again(began + timeout) }
            state.timerSet = false
            return .stall
        }
        switch next {
        case .lapse: break
        case .stall: onStall()
        case .again(let deadline): setTimer(at: deadline)
        }
    }
}
