public import TipSyncCore

/// One step of a ``History``: `{"op": "...", "device": "...", ...}` with the fields its op needs.
public struct HistoryStep: Codable, Hashable, Sendable {
    public enum Operation: String, Codable, Hashable, Sendable, CaseIterable {
        // Device operations (each is one local write on `device`).
        /// `event`, optional `value` (the donation's info).
        case donate
        /// `name`, `value`.
        case setParameter
        /// `tip`, optional `duration` (seconds).
        case display
        /// `tip`, optional `reason` (default `tipClosed`).
        case invalidate
        /// `tip`.
        case resetEligibility
        case resetDatastore
        /// `event`.
        case deleteDonations
        // Sync.
        /// `device` pushes its outbox.
        case push
        /// `device` pulls until the server has nothing more.
        case pull
        /// `device` pushes then pulls.
        case sync
        /// The live channel delivers: every reachable device pulls.
        case live
        // Faults.
        /// `device`'s next request is lost on the way (the server never sees it).
        case dropRequest
        /// `device`'s next request reaches the server, but its response is lost.
        case dropResponse
        /// `device`'s next request is delivered twice.
        case duplicate
        /// `device` cannot reach the server until `heal`.
        case partition
        case heal
        /// `device` crashes and restarts: its replica is reopened from disk, memory is lost.
        case crashDevice
        /// The server crashes after committing the next request it receives, before answering, and restarts.
        case crashServer
        /// The server restarts cleanly (its database reopened).
        case restartServer
        /// The server compacts the log (drops superseded last-writer-wins entries).
        case compact
        /// The operator backs the server's database up (online). The server starts with one backup,
        /// taken when its accounts and tokens exist and its log is empty.
        case backupServer
        /// The server's database is lost and the latest backup restored, as `deploy/README.md` says:
        /// migrate, `rotate-cursors`, serve. Devices must re-push what the backup lacks.
        case restoreServer
        // Time.
        /// Every clock moves `milliseconds` forward.
        case advance
        /// `device`'s clock becomes `milliseconds` ahead of the server's (negative: behind).
        case setClockOffset
    }

    public var op: Operation
    public var device: String?
    public var tip: String?
    public var event: String?
    public var name: String?
    public var value: JSONValue?
    public var duration: Double?
    public var reason: InvalidationReason?
    public var milliseconds: Int64?

    public init(
        _ op: Operation, device: String? = nil, tip: String? = nil, event: String? = nil, name: String? = nil,
        value: JSONValue? = nil, duration: Double? = nil, reason: InvalidationReason? = nil,
        milliseconds: Int64? = nil
    ) {
        self.op = op
        self.device = device
        self.tip = tip
        self.event = event
        self.name = name
        self.value = value
        self.duration = duration
        self.reason = reason
        self.milliseconds = milliseconds
    }

    /// Whether the step writes on its device (what the delivery permutations keep in order).
    public var isDeviceOperation: Bool {
        switch op {
        case .donate, .setParameter, .display, .invalidate, .resetEligibility, .resetDatastore, .deleteDonations: true
        default: false
        }
    }
}
