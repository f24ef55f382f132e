import TipSyncCore

/// How a replica merges a change into its state: ``ReplicaState/apply(_:donationLimits:)``.
/// Only the conflict-replay simulator swaps it, to prove that a broken merge rule is caught.
@_spi(Simulation) public struct ReplicaMerge: Sendable {
    public var apply: @Sendable (inout ReplicaState, Change, [String: DonationLimit]) -> Bool

    public init(apply: @escaping @Sendable (inout ReplicaState, Change, [String: DonationLimit]) -> Bool) {
        self.apply = apply
    }

    /// The merge rules of `protocol.md` (`ReplicaState+Merge.swift`).
    public static let standard = ReplicaMerge { state, change, limits in state.apply(change, donationLimits: limits) }
}
