/// Which step of "Status" (protocol.md §4) decides a tip's status, with what decided it: the answer
/// to "why is this tip not showing?". ``StatusEvaluator/reason(of:)`` computes it; the status is a
/// function of it (``status``).
public enum StatusReason: Sendable, Hashable {
    /// A testing override (local only) forces this status.
    case testingOverride(TipStatus)
    /// The eligibility register says so: `invalidate(reason:)` on some device.
    case invalidated(InvalidationReason)
    /// The display count, summed over devices in the current epoch, reached `maxDisplayCount`.
    case maxDisplayCount(count: Int64, maximum: Int)
    /// The display duration reached `maxDisplayDuration` (seconds).
    case maxDisplayDuration(duration: Double, maximum: Double)
    /// The catalog turns every tip (`allTips`) or this one off.
    case turnedOff(allTips: Bool)
    /// The tip's `targeting[index]` does not hold (or fails to evaluate) on this device.
    case targeting(index: Int)
    /// The tip's `rules[index]` does not hold (or fails to evaluate).
    case rule(index: Int)
    /// Display frequency holds the tip back until this instant (milliseconds).
    case displayFrequency(until: Double)
    /// The device waits for its first sync.
    case firstSync
    /// The tip's running experiment (protocol.md §13.12) holds it back: the account is in the
    /// `holdout` arm, or (`arm` `nil`) the device does not know its account yet, so not its arm.
    case experiment(id: String, arm: TipExperiment.Arm?)
    /// Nothing holds it back.
    case available

    /// The status this reason gives.
    public var status: TipStatus {
        switch self {
        case .testingOverride(let status): status
        case .invalidated(let reason): .invalidated(reason)
        case .maxDisplayCount: .invalidated(.displayCountExceeded)
        case .maxDisplayDuration: .invalidated(.displayDurationExceeded)
        case .turnedOff, .targeting, .rule, .displayFrequency, .firstSync, .experiment: .pending
        case .available: .available
        }
    }

    /// The reason's code in protocol terms (section 13.9): `testingOverride`, `invalidated`,
    /// `maxDisplayCount`, `maxDisplayDuration`, `turnedOff`, `targeting`, `rule`,
    /// `displayFrequency`, `firstSync`, `experiment` or `available`.
    public var code: String {
        switch self {
        case .testingOverride: "testingOverride"
        case .invalidated: "invalidated"
        case .maxDisplayCount: "maxDisplayCount"
        case .maxDisplayDuration: "maxDisplayDuration"
        case .turnedOff: "turnedOff"
        case .targeting: "targeting"
        case .rule: "rule"
        case .displayFrequency: "displayFrequency"
        case .firstSync: "firstSync"
        case .experiment: "experiment"
        case .available: "available"
        }
    }
}
