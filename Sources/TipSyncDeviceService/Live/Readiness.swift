import Synchronization

/// Whether this instance serves devices' live streams yet (`GET /ready`, deploy/README.md
/// "Readiness"): it accepts connections, and it hears what other instances on its database accept
/// (PostgreSQL `LISTEN` in place; a single-instance backend has nothing to hear). A stream opened
/// before the second would miss another instance's pushes until the next one. `/health` says only
/// that the process answers; a load balancer sends devices to an instance once `/ready` says `200`,
/// and stops when it says `503` again (the listening connection dropped and is being re-made).
package final class Readiness: Sendable {
    /// What an instance waits for before it is ready, as `/ready` names it.
    package enum Condition: String, Sendable, CaseIterable, Comparable {
        /// The listener accepts connections.
        case accepting
        /// Other instances' pushes, revocations and erasures reach this one's streams.
        case listening

        package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    private let missing: Mutex<Set<Condition>>

    /// Waiting for `missing` (default: everything; `[]`: ready, for a router served without a listener).
    package init(missing: Set<Condition> = Set(Condition.allCases)) {
        self.missing = Mutex(missing)
    }

    /// `condition` holds from now on (until ``lost(_:)``).
    package func holds(_ condition: Condition) { _ = missing.withLock { $0.remove(condition) } }

    /// `condition` no longer holds.
    package func lost(_ condition: Condition) { _ = missing.withLock { $0.insert(condition) } }

    /// What the instance still waits for, in order; empty when ready.
    package var waitingFor: [Condition] { missing.withLock { $0.sorted() } }
}
