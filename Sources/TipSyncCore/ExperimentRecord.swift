/// Reach and exposure (protocol.md §13.12) are donations to reserved events, so every client and
/// server of version 2 already syncs, stores, compacts and merges them (a grow-only set by id): a
/// person's **first** reach is the earliest such donation on any of their devices, whatever order
/// they arrive in, and a device offline for a week reports later without changing anyone else's.
///
/// - reach: `tipsync.reach:<experiment>`, donated when the tip would be shown now — in the holdout
///   as in the treatment or a variant — with info `{"arm", "tip"}`;
/// - exposure: `tipsync.exposure:<experiment>`, donated when a device outside the holdout shows it.
public enum ExperimentRecord: String, Sendable, Hashable, CaseIterable {
    case reach, exposure

    /// The event this record donates to for `experiment`.
    public func event(of experiment: TipExperiment) -> String {
        switch self {
        case .reach: experiment.reachEvent
        case .exposure: experiment.exposureEvent
        }
    }

    /// The earliest record of this kind any device of the account made (milliseconds), or `nil`.
    public func first(of experiment: TipExperiment, in state: ReplicaState) -> Int64? {
        // Donations are kept sorted by date.
        state.events[event(of: experiment)]?.donations.first?.date
    }

    /// The donation a device makes for this record of `tip`'s experiment in `arm`, if the account
    /// has none yet (an earlier one from any device already decides "first"). `nil`: nothing to write.
    public func operation(
        tip: TipDefinition, arm: TipExperiment.Arm, state: ReplicaState, id: String, date: Int64
    ) -> Change.Operation? {
        guard let experiment = tip.runningExperiment, first(of: experiment, in: state) == nil else { return nil }
        return .donation(
            event: event(of: experiment), id: id, date: date,
            info: .object(["arm": .string(arm.rawValue), "tip": .string(tip.id)]))
    }
}

extension StatusEvaluator {
    /// The arm the app's view of `tip` is in, when asking its status now counts as reaching it:
    /// the tip has a running experiment, the device knows its account, and the tip is available
    /// (treatment) or held back only by the holdout. `nil` otherwise — nothing to record.
    public func reachingArm(of tip: TipDefinition) -> TipExperiment.Arm? {
        guard let experiment = tip.runningExperiment else { return nil }
        switch reason(of: tip) {
        case .available: return deviceContext.account.map { experiment.arm(account: $0) }
        case .experiment(_, .holdout?): return .holdout
        default: return nil
        }
    }

    /// The tip of a group whose reach showing the group now would record: the group's current tip
    /// (``currentTip(of:priority:)``) as it would be if no experiment held any tip out, when that tip
    /// has a running experiment and ``reachingArm(of:)`` gives its arm. A held-out tip is reached where
    /// the group would have shown it.
    public func tipReachedInGroup(of tips: [TipDefinition], priority: TipGroupPriority) -> TipDefinition? {
        for tip in tips {
            let reason = reason(of: tip)
            if case .experiment(_, .holdout?) = reason { return reachingArm(of: tip) != nil ? tip : nil }
            switch reason.status {
            case .available: return reachingArm(of: tip) != nil ? tip : nil
            case .invalidated: continue
            case .pending: if priority == .ordered { return nil }
            }
        }
        return nil
    }
}
