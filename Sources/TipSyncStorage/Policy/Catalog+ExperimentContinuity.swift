package import TipSyncCore
import TipSyncServerBasics

/// What a new catalog may do to the experiments of the stored one (protocol.md §13.12): an account's
/// arm and what its results mean never change while an experiment runs. Every way a catalog is
/// stored — upload, a platform's part, restore, the CLI, the console — passes this check
/// (``InsightStore/putCatalogJSON(_:uploadedBy:at:restoredFrom:)``).
extension Catalog {
    /// Why this catalog cannot replace `old`, naming the field, or `nil`:
    /// - a running experiment keeps its tip, `holdout`, `goal` and `window` (it may be stopped);
    /// - a running experiment is not removed — stop it first, so its results stay readable;
    /// - a stopped experiment does not run again, nor does its `stoppedAt` move.
    package func experimentProblem(replacing old: Catalog?) -> String? {
        guard let old else { return nil }
        var new: [String: (index: Int, tip: TipDefinition, experiment: TipExperiment)] = [:]
        for (index, tip) in tips.enumerated() {
            if let experiment = tip.experiment { new[experiment.id] = (index, tip, experiment) }
        }
        for tip in old.tips {
            guard let before = tip.experiment else { continue }
            guard let (index, newTip, after) = new[before.id] else {
                if before.isRunning {
                    return
                        "tips: experiment '\(before.id)' of tip '\(tip.id)' is running; stop it (POST /admin/v1/experiments/\(before.id)/stop or 'tipsync-server experiment stop \(before.id)') before removing it"
                }
                continue
            }
            let path = "tips[\(index)].experiment"
            if let stoppedAt = before.stoppedAt {
                if after.stoppedAt != stoppedAt {
                    return
                        "\(path).stoppedAt: experiment '\(before.id)' stopped at \(stoppedAt) and cannot run again or move its stop; start a new experiment with another id"
                }
                continue
            }
            if newTip.id != tip.id {
                return "\(path): experiment '\(before.id)' runs on tip '\(tip.id)' and cannot move to '\(newTip.id)'"
            }
            for (member, changed) in [
                ("holdout", before.holdout != after.holdout), ("goal", before.goal != after.goal),
                ("window", before.windowSeconds != after.windowSeconds),
            ] where changed {
                return
                    "\(path).\(member): experiment '\(before.id)' is running, so its \(member) cannot change (accounts would change arms or results meaning); stop it and start another"
            }
        }
        return nil
    }
}
