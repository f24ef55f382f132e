import Foundation
public import TipSync
public import TipSyncCore

/// The invariants every replay must hold after its final sync. The expected values are computed
/// from the union of every device's change log — straight from the protocol's rules, without the
/// merge code — and compared with what each replica holds:
///
/// - **convergence**: every replica holds the same data and computes the same status for every tip
///   at the same instant;
/// - **dismissed stays dismissed**: a tip whose latest eligibility write (by HLC) is an invalidation
///   is invalidated everywhere;
/// - **nothing lost, nothing doubled**: every surviving donation exists exactly once everywhere, and
///   display totals are the sum of the displays every device recorded in the tip's current epoch;
/// - **last writer wins**: every parameter holds its latest write.
public struct InvariantChecker: Sendable {
    public let catalog: Catalog
    /// The instant statuses are compared at (milliseconds since 1970).
    public let now: Int64

    public init(catalog: Catalog, now: Int64) {
        self.catalog = catalog
        self.now = now
    }

    public func check(_ replicas: [(id: String, replica: TipsReplica)]) throws -> [String] {
        var violations: [String] = []
        let log = try replicas.flatMap { try $0.replica.localChanges() }
        let states = replicas.map { ($0.id, $0.replica.state) }
        guard let (firstID, first) = states.first else { return [] }

        // Convergence of data and of status.
        for (id, state) in states.dropFirst() where state != first {
            violations.append("convergence: \(id) differs from \(firstID): \(Self.difference(first, state))")
        }
        let defaults = Dictionary(catalog.parameters.map { ($0.id, $0.defaultValue) }) { $1 }
        func statuses(_ state: ReplicaState) -> [TipStatus] {
            let evaluator = StatusEvaluator(state: state, parameterDefaults: defaults, now: Double(now) / 1000)
            return catalog.tips.map { evaluator.status(of: $0) }
        }
        let firstStatuses = statuses(first)
        for (id, state) in states.dropFirst() where statuses(state) != firstStatuses {
            violations.append("convergence: \(id) computes other statuses than \(firstID)")
        }

        let expected = Expected(log: log)
        for (id, state) in states {
            violations += expected.violations(in: state, device: id, catalog: catalog, statuses: statuses(state))
        }
        return violations
    }

    static func difference(_ a: ReplicaState, _ b: ReplicaState) -> String {
        if a.datastoreReset != b.datastoreReset {
            return
                "datastore reset \(a.datastoreReset.map(\.description) ?? "nil") vs \(b.datastoreReset.map(\.description) ?? "nil")"
        }
        if a.parameters != b.parameters { return "parameters \(a.parameters) vs \(b.parameters)" }
        if a.tips != b.tips { return "tips \(a.tips) vs \(b.tips)" }
        if a.displays != b.displays { return "displays \(a.displays) vs \(b.displays)" }
        return "donations"
    }
}

/// What every replica must hold, computed from the union of the change logs.
struct Expected {
    var reset: Stamp?
    var parameters: [String: Versioned<JSONValue>] = [:]
    var eligibility: [String: Versioned<EligibilityState>] = [:]
    var resets: [String: Stamp] = [:]
    var deletions: [String: Stamp] = [:]
    /// Surviving donations per event: id → date.
    var donations: [String: [String: Int64]] = [:]
    var displays: [String: [(device: String, epoch: Stamp?, count: Int64, stamp: Stamp)]] = [:]

    init(log: [Change]) {
        let reset = log.compactMap { if case .datastoreReset = $0.operation { $0.stamp } else { nil } }.max()
        self.reset = reset
        let survives = { (stamp: Stamp) in reset.map { stamp > $0 } ?? true }
        for change in log where survives(change.stamp) {
            switch change.operation {
            case .parameter(let id, let value):
                if parameters[id].map({ change.stamp > $0.stamp }) ?? true {
                    parameters[id] = Versioned(value: value, stamp: change.stamp)
                }
            case .eligibility(let tip, let state):
                if eligibility[tip].map({ change.stamp > $0.stamp }) ?? true {
                    eligibility[tip] = Versioned(value: state, stamp: change.stamp)
                }
                if state == .eligible { resets[tip] = max(resets[tip] ?? change.stamp, change.stamp) }
            case .donationsDeleted(let event):
                deletions[event] = max(deletions[event] ?? change.stamp, change.stamp)
            case .display(let tip, let epoch, let count, _, _):
                displays[tip, default: []].append((change.device, epoch, count, change.stamp))
            case .donation, .datastoreReset:
                break
            }
        }
        for change in log where survives(change.stamp) {
            if case .donation(let event, let id, let date, _) = change.operation,
                deletions[event].map({ change.stamp > $0 }) ?? true
            {
                donations[event, default: [:]][id] = date
            }
        }
    }

    /// The tip's current display epoch and the display count in it, summed over devices.
    func displayTotal(_ tip: String) -> (count: Int64, recorded: Int64) {
        let all = (displays[tip] ?? []).filter { display in
            guard let reset else { return true }
            return display.epoch.map { $0 >= reset } ?? false
        }
        var epoch: Stamp? = [resets[tip], reset].compactMap { $0 }.max()
        for display in all where display.epoch.map({ e in epoch.map { e > $0 } ?? true }) ?? false {
            epoch = display.epoch
        }
        var perDevice: [String: (max: Int64, changes: Int64)] = [:]
        for display in all where display.epoch == epoch {
            let current = perDevice[display.device] ?? (0, 0)
            perDevice[display.device] = (max(current.max, display.count), current.changes + 1)
        }
        return (perDevice.values.reduce(0) { $0 + $1.max }, perDevice.values.reduce(0) { $0 + $1.changes })
    }

    func violations(in state: ReplicaState, device: String, catalog: Catalog, statuses: [TipStatus]) -> [String] {
        var found: [String] = []
        if state.datastoreReset != reset {
            found.append(
                "\(device): datastore reset \(String(describing: state.datastoreReset)), expected \(String(describing: reset))"
            )
        }
        for (id, expected) in parameters where state.parameters[id] != expected {
            found.append(
                "last writer wins: \(device) has \(id) = \(state.parameters[id]?.value.canonicalText ?? "nil"), latest write is \(expected.value.canonicalText)"
            )
        }
        for id in state.parameters.keys where parameters[id] == nil {
            found.append("\(device) holds parameter \(id) that no surviving write set")
        }
        for (tip, latest) in eligibility {
            guard case .invalidated(let reason) = latest.value else { continue }
            if state.tips[tip]?.eligibility?.value != latest.value {
                found.append(
                    "dismissed stays dismissed: \(device) does not hold \(tip) invalidated (\(reason.rawValue))")
            }
            if let index = catalog.tips.firstIndex(where: { $0.id == tip }), statuses[index] != .invalidated(reason) {
                found.append("dismissed stays dismissed: \(device) reports \(tip) as \(statuses[index])")
            }
        }
        for event in Set(donations.keys).union(state.events.keys) {
            let held = state.events[event]?.donations.map(\.id) ?? []
            let expected = donations[event] ?? [:]
            if held.count != Set(held).count {
                found.append("nothing doubled: \(device) holds a donation of \(event) twice")
            }
            // A donation limit lets a replica drop what can never be visible again; what rules see —
            // the newest `maximumCount` by (date, id) — must still be exactly the expected newest.
            let limit = catalog.donationLimits[event]?.maximumCount
            func newest(_ dates: [(id: String, date: Int64)]) -> Set<String> {
                let sorted = dates.sorted {
                    $0.date != $1.date ? $0.date < $1.date : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8)
                }
                return Set(sorted.suffix(limit ?? sorted.count).map(\.id))
            }
            let heldDates = state.events[event]?.donations.map { (id: $0.id, date: $0.date) } ?? []
            if !Set(held).isSubset(of: expected.keys) {
                found.append("nothing invented: \(device) holds a donation of \(event) nobody made or that was deleted")
            } else if limit == nil
                ? Set(held) != Set(expected.keys) : newest(heldDates) != newest(expected.map { ($0.key, $0.value) })
            {
                found.append(
                    "nothing lost: \(device) holds \(held.count) donations of \(event), expected \(expected.count)"
                        + (limit.map { " (the newest \($0) visible)" } ?? ""))
            }
        }
        for tip in Set(displays.keys).union(state.displays.keys) {
            let (expected, recorded) = displayTotal(tip)
            if expected != recorded {
                found.append("displays: \(tip)'s counters say \(expected) displays but \(recorded) were recorded")
            }
            let held = state.displayTotals(of: tip).count
            if held != expected {
                found.append(
                    "display totals: \(device) counts \(held) displays of \(tip), devices recorded \(expected)")
            }
        }
        return found
    }
}
