import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// One live stream's (`GET /v1/live`) link to the ``ChangeNotifier``: wake-ups, and whether news
/// arrived since the stream last wrote. Wake-ups collapse (at most one is pending), but news is never
/// lost: a heartbeat's wake-up that finds news pending writes `changes` (and no heartbeat).
///
/// Wake-ups call one function (``onWake(_:)``), so no task needs to wait for them: an idle stream
/// served on the connection's pipeline (``LiveConnectionHandler``) costs no task at all. A stream
/// written by a task reads them as ``wakeUps``.
package final class LiveSubscription: Sendable {
    private let pending = Atomic<Bool>(false)
    private let catalogPending = Atomic<Bool>(false)
    private let heartbeatPending = Atomic<Bool>(false)
    private let evicted = Atomic<Bool>(false)
    private let state = Mutex(State())

    private struct State {
        var wake: (@Sendable () -> Void)?
        /// A wake-up arrived before anyone listened.
        var woken = false
        var ended = false
        var endings: [@Sendable () -> Void] = []
    }

    /// Called once, when the stream has opened and listens (``onWake(_:)``'s first call).
    private let listening: @Sendable () -> Void

    init(listening: @escaping @Sendable () -> Void = {}) {
        self.listening = listening
    }

    /// The account's log grew.
    func changes() {
        pending.store(true, ordering: .releasing)
        wakeUp()
    }

    /// A new catalog was uploaded.
    func catalogChanged() {
        catalogPending.store(true, ordering: .releasing)
        wakeUp()
    }

    /// Time for a heartbeat (``LiveHeartbeat``).
    func heartbeat() {
        heartbeatPending.store(true, ordering: .releasing)
        wakeUp()
    }

    /// Whether a new catalog was uploaded since the last call (then the stream writes `catalog`).
    package func takeCatalog() -> Bool { catalogPending.exchange(false, ordering: .acquiringAndReleasing) }

    /// Whether news arrived since the last call (then the stream writes `changes`).
    package func takeChanges() -> Bool { pending.exchange(false, ordering: .acquiringAndReleasing) }

    /// Whether a heartbeat came since the last call (then, without news, the stream writes one; a
    /// wake-up whose news an earlier one already took writes nothing).
    package func takeHeartbeat() -> Bool { heartbeatPending.exchange(false, ordering: .acquiringAndReleasing) }

    /// Calls `wake` on every wake-up from now on until the stream ends (at once if one arrived
    /// before, even when the stream has ended since). A stream has one reader: a second call
    /// replaces the first.
    package func onWake(_ wake: @escaping @Sendable () -> Void) {
        let (woken, first) = state.withLock { state in
            let first = state.wake == nil && !state.ended
            if !state.ended { state.wake = wake }
            defer { state.woken = false }
            return (state.woken, first)
        }
        if first { listening() }
        if woken { wake() }
    }

    /// The wake-ups as a sequence, for a stream a task writes; it finishes when the stream ends, and
    /// the stream ends when the task stops reading it.
    package var wakeUps: AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in self?.finish() }
        // A wake-up that came before is read before the end.
        onWake { continuation.yield() }
        onTermination { continuation.finish() }
        return stream
    }

    /// Ends the stream because its device opened more streams than it may hold
    /// (``ChangeNotifier/subscribeLive(_:limit:)``): unlike other ends, the connection closes at once,
    /// even while a write waits for the client.
    func evict() {
        evicted.store(true, ordering: .releasing)
        finish()
    }

    /// Whether the stream was ended by ``evict()``.
    var wasEvicted: Bool { evicted.load(ordering: .acquiring) }

    /// Ends the stream (revocation, erasure, shutdown, the client leaving, the credential expiring).
    package func finish() {
        let endings = state.withLock { state in
            guard !state.ended else { return [@Sendable () -> Void]() }
            state.ended = true
            state.wake = nil
            defer { state.endings = [] }
            return state.endings
        }
        for action in endings { action() }
    }

    /// Whether the stream has opened and waits for wake-ups (``onWake(_:)`` was called; not ended).
    package var isListening: Bool { state.withLock { $0.wake != nil } }

    /// Runs `action` once the stream has ended (at once if it already has).
    func onTermination(_ action: @escaping @Sendable () -> Void) {
        let ended = state.withLock { state in
            if !state.ended { state.endings.append(action) }
            return state.ended
        }
        if ended { action() }
    }

    private func wakeUp() {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.ended else { return nil }
            if state.wake == nil { state.woken = true }
            return state.wake
        }
        wake?()
    }
}
