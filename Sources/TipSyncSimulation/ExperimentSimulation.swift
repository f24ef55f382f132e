import Foundation
import TipSyncCore
package import TipSyncServer

/// Seeded runs of an experiment with a known truth (issue 57, item 5): accounts with one to three
/// devices each reach the tip at their own moments, some devices are offline and report days later,
/// conversions happen in and out of the window, and the server's path — each account's log in
/// arrival order, derived by ``TipUsage/derive(from:previous:catalog:account:)`` once before and
/// once after the late devices report, then ``ExperimentResults`` — gives the interval. Over many
/// seeds, the share of intervals covering the true difference is the interval's coverage, and with
/// equal rates (an A/A test) the share called significant is its false-positive rate.
public struct ExperimentSimulation: Sendable {
    public var accounts: Int
    public var holdoutPercent: Double
    /// The holdout's true conversion rate within the window.
    public var holdoutRate: Double
    /// The treatment's.
    public var treatmentRate: Double
    /// The chance that a device is offline when it reaches the tip and reports only later.
    public var offlineShare = 0.2
    /// The chance that an account also donates to the goal after its window (must not count).
    public var lateGoalShare = 0.1

    public init(accounts: Int, holdoutPercent: Double, holdoutRate: Double, treatmentRate: Double) {
        self.accounts = accounts
        self.holdoutPercent = holdoutPercent
        self.holdoutRate = holdoutRate
        self.treatmentRate = treatmentRate
    }

    /// One run's outcome.
    public struct Run: Sendable {
        public var seed: UInt64
        package var results: ExperimentResults
        /// Whether the 95% interval covers `treatmentRate − holdoutRate`.
        public var covers: Bool
        /// Accounts whose derived conversion differs from what the run decided (must be 0).
        public var misderived: Int
    }

    public func run(seed: UInt64) -> Run {
        var random = SplitMix64(seed: seed)
        let experiment = TipExperiment(
            id: "sim-\(seed)", holdout: holdoutPercent, goal: .event("used"), window: 604_800)
        let catalog = Catalog(
            events: [EventDefinition(id: "used")],
            tips: [
                {
                    var tip = TipDefinition(id: "feature", title: "Feature")
                    tip.experiment = experiment
                    return tip
                }()
            ])
        let start: Int64 = 1_800_000_000_000
        let day: Int64 = 86_400_000
        var participants: [ExperimentParticipation] = []
        var misderived = 0
        for index in 0..<accounts {
            let account = "account-\(seed)-\(index)"
            let arm = experiment.arm(account: account)
            let devices = Int.random(in: 1...3, using: &random)
            // Each device reaches the tip at its own moment within the first two weeks.
            var reaches: [(device: String, at: Int64, late: Bool)] = (0..<devices).map { device in
                (
                    "d\(device)", start + Int64.random(in: 0..<(14 * day), using: &random),
                    Double.random(in: 0..<1, using: &random) < offlineShare
                )
            }
            reaches.sort { $0.at < $1.at }
            let firstReach = reaches[0].at
            let converts = Double.random(in: 0..<1, using: &random) < (arm == .holdout ? holdoutRate : treatmentRate)
            var changes: [(change: Change, late: Bool)] = []
            var seqs: [String: Int64] = [:]
            func add(_ device: String, _ at: Int64, _ operation: (String) -> Change.Operation, late: Bool) {
                let seq = (seqs[device] ?? 0) + 1
                seqs[device] = seq
                changes.append(
                    (
                        Change(
                            device: device, seq: seq, hlc: HLC(milliseconds: UInt64(at), counter: 0),
                            operation: operation("\(device):\(seq)")), late
                    ))
            }
            for reach in reaches {
                add(
                    reach.device, reach.at,
                    {
                        .donation(
                            event: experiment.reachEvent, id: $0, date: reach.at,
                            info: .object(["arm": .string(arm.rawValue), "tip": .string("feature")]))
                    }, late: reach.late)
            }
            var convertedAt: Int64?
            if converts {
                let at = firstReach + Int64.random(in: 0..<(7 * day), using: &random)
                let device = reaches.randomElement(using: &random)!
                add(device.device, at, { .donation(event: "used", id: $0, date: at, info: nil) }, late: device.late)
                convertedAt = at
            }
            if Double.random(in: 0..<1, using: &random) < lateGoalShare {
                let at = firstReach + 7 * day + Int64.random(in: 1..<(7 * day), using: &random)
                add(reaches[0].device, at, { .donation(event: "used", id: $0, date: at, info: nil) }, late: false)
            }
            // The server's log in arrival order: on-time devices first, shuffled; the late ones after.
            let onTime = changes.filter { !$0.late }.map(\.change).shuffled(using: &random)
            let late = changes.filter(\.late).map(\.change).shuffled(using: &random)
            let before = TipUsage.derive(from: onTime, catalog: catalog, account: account)
            let after = TipUsage.derive(from: onTime + late, previous: before, catalog: catalog, account: account)
            let participation = after.first { $0.tip == "feature" }?.experiment
            if participation?.reachedAt != firstReach || participation?.convertedAt != convertedAt {
                misderived += 1
            }
            if let participation { participants.append(participation) }
        }
        let results = ExperimentResults(
            tip: "feature", experiment: experiment, participants: participants, now: start + 60 * day)
        let truth = treatmentRate - holdoutRate
        let covers = results.difference.map { $0.lower <= truth && truth <= $0.upper } ?? false
        return Run(seed: seed, results: results, covers: covers, misderived: misderived)
    }
}
