import Synchronization

/// One live stream's (`GET /v1/live`) link to the ``ChangeNotifier``: wake-ups, and whether news
/// arrived since the stream last wrote. Wake-ups collapse (at most one is pending), but news is never
/// lost: a heartbeat's wake-up that finds news pending writes `changes`.
public final class LiveSubscription: Sendable {
    /// One element per wake-up; finishes when the stream must end.
    public let wakeUps: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let pending = Atomic<Bool>(false)
    private let catalogPending = Atomic<Bool>(false)
    private let endings = Endings()

    init() {
        (wakeUps, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [endings] _ in endings.run() }
    }

    /// The account's log grew.
    func changes() {
        pending.store(true, ordering: .releasing)
        continuation.yield()
    }

    /// A new catalog was uploaded.
    func catalogChanged() {
        catalogPending.store(true, ordering: .releasing)
        continuation.yield()
    }

    func heartbeat() { continuation.yield() }

    /// Whether a new catalog was uploaded since the last call (then the stream writes `catalog`).
    public func takeCatalog() -> Bool { catalogPending.exchange(false, ordering: .acquiringAndReleasing) }

    /// Whether news arrived since the last call (then the stream writes `changes`, else a heartbeat).
    public func takeChanges() -> Bool { pending.exchange(false, ordering: .acquiringAndReleasing) }

    /// Ends the stream (revocation, erasure, shutdown, the client leaving, the credential expiring).
    public func finish() { continuation.finish() }

    /// Runs `action` once the stream has ended (at once if it already has).
    func onTermination(_ action: @escaping @Sendable () -> Void) {
        endings.add(action)
    }

    /// What runs when the stream ends, each once.
    private final class Endings: Sendable {
        private let state = Mutex<(ended: Bool, actions: [@Sendable () -> Void])>((false, []))

        func add(_ action: @escaping @Sendable () -> Void) {
            let ended = state.withLock { state in
                if !state.ended { state.actions.append(action) }
                return state.ended
            }
            if ended { action() }
        }

        func run() {
            let actions = state.withLock { state in
                state.ended = true
                defer { state.actions = [] }
                return state.actions
            }
            for action in actions { action() }
        }
    }
}
