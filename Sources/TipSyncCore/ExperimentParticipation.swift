/// One account in one experiment, read from its merged state (protocol.md §13.12): its arm, its first
/// reach and exposure on any device, and its first conversion — the experiment's goal reached at or
/// after the first reach, within the window and before the experiment stopped. The server derives it
/// for every account with the same merge every device runs; results count these rows.
public struct ExperimentParticipation: Sendable, Hashable {
    public var experiment: String
    public var arm: TipExperiment.Arm
    /// The earliest reach on any device (milliseconds since 1970), or `nil`: not reached yet.
    public var reachedAt: Int64?
    /// The earliest exposure on any device (outside the holdout only), or `nil`.
    public var exposedAt: Int64?
    /// The first goal within the window after `reachedAt`, or `nil`.
    public var convertedAt: Int64?

    public init(
        experiment: String, arm: TipExperiment.Arm, reachedAt: Int64?, exposedAt: Int64?, convertedAt: Int64?
    ) {
        self.experiment = experiment
        self.arm = arm
        self.reachedAt = reachedAt
        self.exposedAt = exposedAt
        self.convertedAt = convertedAt
    }

    /// The account's participation in `tip`'s experiment, or `nil` when it has none or the account
    /// was never reached. `previous` is what was derived before: its earliest times are kept, so a
    /// compaction that dropped a record (a goal donation past its limit, an invalidation later reset)
    /// changes nothing.
    public static func derive(
        tip: TipDefinition, account: String, state: ReplicaState, previous: ExperimentParticipation? = nil
    ) -> ExperimentParticipation? {
        guard let experiment = tip.experiment else { return nil }
        let carried = previous?.experiment == experiment.id ? previous : nil
        func earliest(_ a: Int64?, _ b: Int64?) -> Int64? {
            switch (a, b) {
            case (let a?, let b?): min(a, b)
            case (let a?, nil): a
            default: b
            }
        }
        var reachedAt = earliest(ExperimentRecord.reach.first(of: experiment, in: state), carried?.reachedAt)
        // A reach after the experiment stopped is not part of it (a device that had not heard yet).
        if let stoppedAt = experiment.stoppedAt, let reached = reachedAt, reached >= stoppedAt { reachedAt = nil }
        guard let reachedAt else { return nil }
        let arm = experiment.arm(account: account)
        let exposedAt =
            arm == .treatment
            ? earliest(ExperimentRecord.exposure.first(of: experiment, in: state), carried?.exposedAt) : nil
        let end = min(
            reachedAt &+ Int64(experiment.windowSeconds * 1000), experiment.stoppedAt ?? .max)
        let goals: [Int64]
        switch experiment.goal {
        case .event(let event):
            goals = (state.events[event]?.donations ?? []).map(\.date)
        case .actionPerformed:
            if case .invalidated(.actionPerformed)? = state.tips[tip.id]?.eligibility?.value,
                let stamp = state.tips[tip.id]?.eligibility?.stamp
            {
                goals = [Int64(clamping: stamp.hlc.milliseconds)]
            } else {
                goals = []
            }
        }
        let converted = goals.filter { $0 >= reachedAt && $0 <= end }.min()
        let carriedConversion = carried?.convertedAt.flatMap { $0 >= reachedAt && $0 <= end ? $0 : nil }
        return ExperimentParticipation(
            experiment: experiment.id, arm: arm, reachedAt: reachedAt, exposedAt: exposedAt,
            convertedAt: earliest(converted, carriedConversion))
    }
}
