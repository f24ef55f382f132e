import TipSyncCore

/// How a replica merges changes into its state: ``ReplicaState/apply(_:donationLimits:)``.
/// Only the conflict-replay simulator swaps it, to prove that a broken merge rule is caught.
@_spi(Simulation) public struct ReplicaMerge: Sendable {
    public var apply: @Sendable (inout ReplicaState, Change, [String: DonationLimit]) -> Bool
    /// A batch in order (a pull page); whether each change changed the state.
    public var applyAll: @Sendable (inout ReplicaState, [Change], [String: DonationLimit]) -> [Bool]

    /// A merge of one change at a time (a batch is merged change by change).
    public init(apply: @escaping @Sendable (inout ReplicaState, Change, [String: DonationLimit]) -> Bool) {
        self.apply = apply
        self.applyAll = { state, changes, limits in changes.map { apply(&state, $0, limits) } }
    }

    /// The merge rules of `protocol.md` (`ReplicaState+Merge.swift`).
    public static let standard: ReplicaMerge = {
        var merge = ReplicaMerge { state, change, limits in state.apply(change, donationLimits: limits) }
        merge.applyAll = { state, changes, limits in state.apply(changes, donationLimits: limits) }
        return merge
    }()
}
