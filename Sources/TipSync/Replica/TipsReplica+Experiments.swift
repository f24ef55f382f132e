import Foundation
import Synchronization
import TipSyncCore

/// Reach and exposure of a tip's experiment (protocol.md §13.12): written when the app asks whether
/// to show a tip and when it shows one, as donations every device merges.
extension TipsReplica {
    /// The status an app shows `tip` by, recording **reach** when the tip would be shown now and the
    /// account has no reach for the tip's running experiment yet — in the holdout (where the status
    /// is `.pending`) as in the treatment. `Tip.status`, `shouldDisplay` and `statusUpdates` read
    /// status this way; ``status(of:)`` and ``explanation(of:)`` only read.
    public func displayStatus(of tip: TipDefinition) -> TipStatus {
        do {
            return try recordingReach(of: tip)
        } catch {
            Tips.report(error)
            return status(of: tip)
        }
    }

    /// ``displayStatus(of:)`` for a catalog tip; `nil` when the catalog has no such tip.
    public func displayStatus(ofTip id: String) -> TipStatus? {
        guard let tip = core.withLock({ $0.catalog[id] }) else { return nil }
        return displayStatus(of: tip)
    }

    /// ``statusUpdates(of:)`` as the app shows the tip by: the current status, then every change,
    /// recording reach (``displayStatus(of:)``) whenever the tip comes to be one the app would show
    /// now — also when only the reason changes, as from a rule to the holdout, both `.pending`.
    public func displayStatusUpdates(of tip: @escaping @Sendable () -> TipDefinition) -> AsyncStream<TipStatus> {
        displayStatusUpdates(resolving: { $0.effective(tip()) }, record: { _ = $0.displayStatus(of: tip()) })
    }

    /// ``displayStatusUpdates(of:)`` for a catalog tip, evaluated with the catalog's current
    /// definition (its last known one once the catalog no longer has it), as
    /// ``catalogStatusUpdates(ofTip:lastKnown:)`` does: what the agent's `watch` follows.
    public func catalogDisplayStatusUpdates(ofTip id: String, lastKnown: TipDefinition) -> AsyncStream<TipStatus> {
        displayStatusUpdates(
            resolving: { $0.catalog[id] ?? lastKnown },
            record: { replica in
                if replica.displayStatus(ofTip: id) == nil { _ = replica.displayStatus(of: lastKnown) }
            })
    }

    func displayStatusUpdates(
        resolving definition: @escaping @Sendable (Definitions) -> TipDefinition,
        record: @escaping @Sendable (TipsReplica) -> Void
    ) -> AsyncStream<TipStatus> {
        let updates = observe { evaluator, definitions in
            let tip = definition(definitions)
            return .displayStatus(evaluator.status(of: tip), evaluator.reachingArm(of: tip))
        }
        return AsyncStream { continuation in
            let task = Task { [weak self] in
                var last: TipStatus?
                for await case .displayStatus(let status, let arm) in updates {
                    if arm != nil, let self { record(self) }
                    if status != last { continuation.yield(status) }
                    last = status
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The status, recording reach if due; throws if the record cannot be stored.
    public func recordingReach(of tip: TipDefinition) throws -> TipStatus {
        try core.withLock { core in
            let definition = Self.effective(tip, core.catalogIsServers, core.catalog)
            let evaluator = evaluator(core)
            let status = evaluator.status(of: definition)
            guard let arm = evaluator.reachingArm(of: definition), let experiment = definition.runningExperiment,
                ExperimentRecord.reach.first(of: experiment, in: core.state) == nil
            else { return status }
            let now = nowMilliseconds
            try commitLocal(&core) { current in
                ExperimentRecord.reach.operation(
                    tip: definition, arm: arm, state: current.state, id: "\(deviceID):\(current.nextSeq)", date: now
                ).map { [$0] } ?? []
            }
            return status
        }
    }

    /// The records a display of `tip` adds outside the holdout of its running experiment: reach if the
    /// account has none yet (a tip shown without being asked about), and exposure if it has none.
    func experimentOperationsForDisplay(
        of tip: String, _ core: borrowing Core, firstSeq: Int64, date: Int64
    ) -> [Change.Operation] {
        guard let definition = core.catalog[tip], let experiment = definition.runningExperiment,
            let account = core.deviceContext.account
        else { return [] }
        let arm = experiment.arm(account: account)
        guard arm != .holdout else { return [] }
        var operations: [Change.Operation] = []
        for record in ExperimentRecord.allCases {
            let id = "\(deviceID):\(firstSeq + Int64(operations.count))"
            if let operation = record.operation(
                tip: definition, arm: arm, state: core.state, id: id, date: date)
            {
                operations.append(operation)
            }
        }
        return operations
    }
}
