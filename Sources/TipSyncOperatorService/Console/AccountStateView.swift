import Foundation
import TipSyncCore
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// An account's merged state (a `ReplicaState` the server built from the log with `TipSyncCore`)
/// as rows for the console's account page.
enum AccountStateView {
    /// Every tip of the state (and of the catalog, when one is stored), with its status at `now`
    /// (seconds since 1970) as a device of `account` with that catalog would compute it, and why
    /// (protocol.md §13.9). The server knows the account, so rollout buckets are evaluated; it knows
    /// no device's platform, version or locale, so targeting on those reads `null`.
    ///
    /// `devices`: the account's devices that reported their context (platform, app version,
    /// locale; header `TipSync-Context`). Each tip row then also says, per device, the status that
    /// device computes and why — with that device's platform part of the catalog, its targeting
    /// context — or that the tip is not for its platform (issue 73, item 4: the account-wide line
    /// said "available" for a tip that held on one of its devices).
    static func tips(
        _ state: ReplicaState, catalog: Catalog? = nil, now: Double = 0, account: String? = nil,
        devices: [(name: String, context: DeviceContext)] = []
    ) -> [[String: Any]] {
        let definitions = Dictionary((catalog?.tips ?? []).map { ($0.id, $0) }) { first, _ in first }
        let evaluator = catalog.map { catalog in
            var evaluator = StatusEvaluator(state: state, catalog: catalog, now: now)
            evaluator.deviceContext = DeviceContext(account: account)
            return evaluator
        }
        // One evaluator per reporting device, over the catalog as that device applies it (13.11).
        let perDevice =
            catalog.map { catalog in
                devices.map {
                    device -> (name: String, context: DeviceContext, evaluator: StatusEvaluator, tips: Set<String>) in
                    let applied = catalog.forPlatform(device.context.platform)
                    var evaluator = StatusEvaluator(state: state, catalog: applied, now: now)
                    var context = device.context
                    context.account = account
                    evaluator.deviceContext = context
                    return (device.name, device.context, evaluator, Set(applied.tips.map(\.id)))
                }
            } ?? []
        return Set(state.tips.keys).union(state.displays.keys).union(definitions.keys).sorted().map { tip in
            let eligibility = state.tips[tip]?.eligibility
            var row: [String: Any] = ["tip": tip]
            if let definition = definitions[tip], let evaluator {
                row["tipTitle"] = definition.title
                let explanation = evaluator.explanation(of: definition)
                row["status"] =
                    switch explanation.status {
                    case .pending: "pending"
                    case .available: "available"
                    case .invalidated(let reason): "invalidated (\(reason.rawValue))"
                    }
                // "Why": the explanation's words after "tip: status — ".
                row["why"] = explanation.description.components(separatedBy: " — ").dropFirst().joined(separator: " — ")
                row["deviceStatuses"] = perDevice.map { device -> [String: Any] in
                    let platform = device.context.platform ?? "unknown"
                    guard device.tips.contains(tip) else {
                        let platforms = (definition.platforms ?? []).joined(separator: ", ")
                        return [
                            "device": device.name, "platform": platform,
                            "line": "not for this platform (\(platforms); this device: \(platform))",
                        ]
                    }
                    let shown = device.evaluator.explanation(of: definition)
                    let words = shown.description.components(separatedBy: ": ").dropFirst().joined(separator: ": ")
                    return ["device": device.name, "platform": platform, "line": words]
                }
            }
            switch eligibility?.value {
            case .invalidated(let reason): row["reason"] = reason.rawValue
            case .eligible: row["state"] = "eligible (reset)"
            case nil: row["state"] = "not invalidated"
            }
            row["writer"] = eligibility.map { stamp($0.stamp) } ?? "—"
            let epoch = state.displayEpoch(of: tip)
            let counters = (state.displays[tip] ?? [:]).filter { $0.key.epoch == epoch }
                .sorted { $0.key.device.utf8.lexicographicallyPrecedes($1.key.device.utf8) }
            let totals = state.displayTotals(of: tip)
            row["displays"] =
                counters.isEmpty
                ? "none"
                : counters.map { "\($0.key.device): \($0.value.count) (\(seconds($0.value.duration)))" }
                    .joined(separator: ", ") + " · total \(totals.count) (\(seconds(totals.duration)))"
                    + (epoch.map { " · epoch \(stamp($0))" } ?? "")
            return row
        }
    }

    static func parameters(_ state: ReplicaState) -> [[String: Any]] {
        state.parameters.keys.sorted().map { id in
            let versioned = state.parameters[id]!
            return ["id": id, "value": json(versioned.value), "writer": stamp(versioned.stamp)]
        }
    }

    static func events(_ state: ReplicaState) -> [[String: Any]] {
        state.events.keys.sorted().map { event in
            let donations = state.donations(of: event)
            return [
                "event": event, "count": donations.count,
                "latest": donations.last.map { ConsoleController.time($0.date) } ?? "—",
            ]
        }
    }

    static func change(_ change: Change) -> [String: Any] {
        [
            "device": change.device, "seq": change.seq, "hlc": "\(change.hlc)", "summary": summary(change.operation),
        ]
    }

    static func summary(_ operation: Change.Operation) -> String {
        switch operation {
        case .parameter(let id, let value): "parameter \(id) = \(json(value))"
        case .eligibility(let tip, .invalidated(let reason)): "invalidate \(tip) (\(reason.rawValue))"
        case .eligibility(let tip, .eligible): "reset eligibility of \(tip)"
        case .display(let tip, _, let count, let duration, _): "display \(tip): count \(count), \(seconds(duration))"
        case .donation(let event, let id, _, _): "donation to \(event) (\(id))"
        case .donationsDeleted(let event): "delete donations of \(event)"
        case .datastoreReset: "reset datastore"
        }
    }

    static func stamp(_ stamp: Stamp) -> String {
        "\(stamp.device) at \(ConsoleController.time(Int64(clamping: stamp.hlc.milliseconds))) (\(stamp.hlc))"
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }

    static func json(_ value: JSONValue) -> String {
        (try? JSONCoding.encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }
}

/// A server-drawn SVG sparkline (no JavaScript, no library).
enum Sparkline {
    static func svg(_ values: [Int], label: String, width: Int = 300, height: Int = 48) -> String {
        let highest = max(1, values.max() ?? 1)
        let step = values.count > 1 ? Double(width) / Double(values.count - 1) : 0
        let points = values.enumerated().map { index, value in
            String(
                format: "%.1f,%.1f", Double(index) * step,
                Double(height) - 2 - Double(value) / Double(highest) * Double(height - 4))
        }.joined(separator: " ")
        return """
            <svg class="spark" viewBox="0 0 \(width) \(height)" preserveAspectRatio="none" role="img" aria-label="\(label), highest \(highest)">\
            <polyline fill="none" stroke="#2f5bea" stroke-width="1.5" vector-effect="non-scaling-stroke" points="\(points)"/></svg>
            """
    }
}
