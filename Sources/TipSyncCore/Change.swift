/// One entry of a replica's change log: every local mutation is one of these, stamped with an HLC,
/// the device id and a per-device sequence number. The same value is what sync pushes and pulls.
public struct Change: Sendable, Hashable {
    /// The device that made the change.
    public var device: String
    /// Per-device sequence number, starting at 1 and increasing by 1 with every change the device makes.
    public var seq: Int64
    /// When it was made.
    public var hlc: HLC
    /// What changed.
    public var operation: Operation
    /// Keys this version of the protocol does not define for the change's kind (a newer client's
    /// fields), kept exactly and passed on unchanged so they reach every device; merges ignore them.
    public var unknownFields: [String: JSONValue]

    public init(
        device: String, seq: Int64, hlc: HLC, operation: Operation, unknownFields: [String: JSONValue] = [:]
    ) {
        self.device = device
        self.seq = seq
        self.hlc = hlc
        self.operation = operation
        self.unknownFields = unknownFields
    }

    /// The (HLC, device) pair that orders this change against others.
    public var stamp: Stamp { Stamp(hlc: hlc, device: device) }

    /// What a change does; each kind has its own merge rule (see ``ReplicaState``).
    public enum Operation: Sendable, Hashable {
        /// A parameter's new value. Merge: last writer wins by (HLC, device).
        case parameter(id: String, value: JSONValue)
        /// A tip's invalidation register. Merge: last writer wins; `.eligible` also starts a new display epoch.
        case eligibility(tip: String, state: EligibilityState)
        /// This device's cumulative displays of a tip within a display epoch. Merge: per-device maximum;
        /// totals are the sum over devices.
        case display(tip: String, epoch: Stamp?, count: Int64, duration: Double, lastDisplayed: Int64)
        /// A donation. Merge: set union by id.
        case donation(event: String, id: String, date: Int64, info: JSONValue?)
        /// `deleteDonations()`: removes every donation of the event stamped at or before this change.
        case donationsDeleted(event: String)
        /// `resetDatastore()`: removes every record stamped at or before this change, on every device.
        case datastoreReset
    }
}
