public import Foundation
import TipSyncCore

/// Turns `tipsync-agent export-history` files (one per device) into a history: each exported
/// change becomes the operation that made it, at its HLC's time, in HLC order, with a sync after
/// each; then the replay's final sync and checks apply as for any history.
public enum HistoryImport {
    struct Export: Decodable {
        var format: String
        var version: Int
        var device: String
        var changes: [Change]
    }

    public static func history(fromExports files: [Data]) throws -> History {
        let exports = try files.map { try JSONCoding.decoder.decode(Export.self, from: $0) }
        for export in exports where export.format != "tipsync-export" || export.version != 1 {
            throw SimulationError("not a tipsync-agent export (format \(export.format), version \(export.version))")
        }
        let changes = exports.flatMap(\.changes).sorted { $0.stamp < $1.stamp }
        let start = Int64(changes.first?.hlc.milliseconds ?? 1_800_000_000_000)
        var steps: [HistoryStep] = []
        var time = start
        var durations: [String: Double] = [:]  // exports hold cumulative on-screen time per device and tip
        for change in changes {
            let at = Int64(change.hlc.milliseconds)
            if at > time {
                steps.append(HistoryStep(.advance, milliseconds: at - time))
                time = at
            }
            let device = change.device
            switch change.operation {
            case .parameter(let id, let value):
                steps.append(HistoryStep(.setParameter, device: device, name: id, value: value))
            case .eligibility(let tip, .invalidated(let reason)):
                steps.append(HistoryStep(.invalidate, device: device, tip: tip, reason: reason))
            case .eligibility(let tip, .eligible):
                steps.append(HistoryStep(.resetEligibility, device: device, tip: tip))
            case .display(let tip, let epoch, _, let duration, _):
                let key = "\(device) \(tip) \(epoch?.description ?? "")"
                steps.append(
                    HistoryStep(.display, device: device, tip: tip, duration: duration - (durations[key] ?? 0)))
                durations[key] = duration
            case .donation(let event, _, _, let info):
                steps.append(HistoryStep(.donate, device: device, event: event, value: info))
            case .donationsDeleted(let event): steps.append(HistoryStep(.deleteDonations, device: device, event: event))
            case .datastoreReset: steps.append(HistoryStep(.resetDatastore, device: device))
            }
            steps.append(HistoryStep(.sync, device: device))
        }
        var history = History(
            description: "imported from \(exports.count) export(s)", devices: exports.map { .init(id: $0.device) },
            steps: steps)
        history.start = start
        return history
    }
}
