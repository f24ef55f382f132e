import Foundation
package import TipSyncCore
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// An experiment's results (protocol.md §13.12), computed from every reached account's participation:
/// per arm, accounts reached, exposed, **analysed** — those whose whole window has passed, before
/// now and before the experiment stopped, so every analysed account had the same chance to convert —
/// converted among them and the rate; then the difference treatment − holdout with its 95% interval
/// (``ProportionDifference``), or "not enough data" while an arm has fewer than
/// ``minimumPerArm`` analysed accounts; and the sample size a minimum detectable effect needs.
package struct ExperimentResults: Sendable, Hashable, Codable {
    package var tip: String
    package var experiment: TipExperiment
    /// `running` or `stopped`.
    package var state: String
    /// `holdout`, then `treatment` or each variant.
    package var arms: [ArmResults]
    package var enoughData: Bool
    package var minimumPerArm: Int
    /// The difference `treatment − holdout` with its interval, once there is enough data (with one
    /// arm outside the holdout; with variants each arm has its own).
    package var difference: ProportionDifference?
    /// Whether an interval excludes 0.
    package var significant: Bool?
    /// The analysis in one sentence.
    package var verdict: String
    /// The minimum detectable effect the sample size is for (an absolute difference).
    package var minimumDetectableEffect: Double
    /// Reached accounts needed per arm to detect it from the holdout's rate (once it has one).
    package var sampleSize: SampleSize?
    /// When this was computed (milliseconds since 1970).
    package var computedAt: Int64

    /// Fewer analysed accounts than this in an arm: "not enough data". With fewer, the normal
    /// approximations under the interval and the sample size do not hold well, and one account moves
    /// a rate by more than a percentage point.
    package static let minimumPerArm = 100
    /// The minimum detectable effect when none is asked for: two percentage points.
    package static let defaultEffect = 0.02

    package struct ArmResults: Sendable, Hashable, Codable {
        package var arm: TipExperiment.Arm
        package var reached: Int
        package var exposed: Int
        package var analysed: Int
        package var converted: Int
        /// Reached accounts that converted, analysed or not: conversions whose account's window is
        /// still open count here and not yet in ``converted`` (issue 73, item 6).
        package var convertedSoFar: Int
        /// `converted / analysed`; `nil` with none analysed.
        package var rate: Double?
        /// This arm − the holdout, with its interval at ``ExperimentResults/confidence`` (arms outside
        /// the holdout, once there is enough data).
        package var difference: ProportionDifference?
        package var significant: Bool?

        /// The conversions in words, for the CLI and the console: `12 of 340 analysed (3.5%)`, and
        /// `0 of 0 analysed (—; 3 more converted so far, their windows still open)` while
        /// conversions wait for their windows to close.
        package var conversionSummary: String {
            let rateText = rate.map { String(format: "%.1f%%", $0 * 100) } ?? "—"
            let waiting = convertedSoFar - converted
            return "\(converted) of \(analysed) analysed (\(rateText)"
                + (waiting > 0 ? "; \(waiting) more converted so far, their windows still open)" : ")")
        }
    }

    /// How the intervals are read, in one sentence (the console's and the README's): one
    /// comparison at 95%, or each of k variants against the holdout at 1 − 0.05/k.
    package var confidenceSentence: String {
        let comparisons = arms.count - 1
        let percent = String(format: "%g", (confidence * 1000).rounded() / 10)
        return comparisons == 1
            ? "The difference from the holdout is given with its \(percent)% interval."
            : "Each of the \(comparisons) variants is compared with the holdout at \(percent)%, so that the chance "
                + "of any false difference stays at 5%."
    }

    /// The confidence of each interval: 95%, divided among the comparisons when variants make more
    /// than one (Bonferroni: two variants, 97.5% each), so the chance of any false "significant" stays
    /// at 5%.
    package var confidence: Double

    /// The results of `tip`'s experiment from its participants' rows at `now` (milliseconds).
    package init(
        tip: String, experiment: TipExperiment, participants: [ExperimentParticipation], now: Int64,
        minimumDetectableEffect: Double = Self.defaultEffect
    ) {
        self.tip = tip
        self.experiment = experiment
        state = experiment.isRunning ? "running" : "stopped"
        minimumPerArm = Self.minimumPerArm
        self.minimumDetectableEffect = minimumDetectableEffect
        computedAt = now
        let closes = min(now, experiment.stoppedAt ?? now)
        let window = Int64(experiment.windowSeconds * 1000)
        arms = experiment.arms.map { arm in
            let reached = participants.filter { $0.experiment == experiment.id && $0.arm == arm && $0.reachedAt != nil }
            let analysed = reached.filter { $0.reachedAt! + window <= closes }
            let converted = analysed.filter { $0.convertedAt != nil }.count
            return ArmResults(
                arm: arm, reached: reached.count, exposed: reached.filter { $0.exposedAt != nil }.count,
                analysed: analysed.count, converted: converted,
                convertedSoFar: reached.filter { $0.convertedAt != nil }.count,
                rate: analysed.isEmpty ? nil : Double(converted) / Double(analysed.count))
        }
        let holdout = arms[0]
        let comparisons = arms.count - 1
        confidence = 1 - 0.05 / Double(comparisons)
        let z = ProportionDifference.z(confidence: confidence)
        let minimum = Self.minimumPerArm
        enoughData = arms.allSatisfy { $0.analysed >= minimum }
        sampleSize = holdout.rate.flatMap {
            // Each treated arm against the holdout: its share of accounts is (100 − holdout) / arms.
            SampleSize(
                baseline: $0, effect: minimumDetectableEffect,
                holdoutPercent: 100 * experiment.holdout
                    / (experiment.holdout + (100 - experiment.holdout) / Double(comparisons)))
        }
        var sentences: [String] = []
        if enoughData {
            for index in arms.indices.dropFirst() {
                let arm = arms[index]
                guard
                    let difference = ProportionDifference(
                        successes: arm.converted, of: arm.analysed, minus: holdout.converted, of: holdout.analysed, z: z
                    )
                else { continue }
                arms[index].difference = difference
                arms[index].significant = difference.isSignificant
                let percent = String(format: "%g", (confidence * 1000).rounded() / 10)
                let range =
                    "\(Self.points(difference.estimate)) points (\(percent)% interval \(Self.points(difference.lower)) to \(Self.points(difference.upper)))"
                let who = comparisons == 1 ? "The tip" : "Variant \(arm.arm.rawValue)"
                sentences.append(
                    difference.lower > 0
                        ? "\(who) raises conversion: \(range)."
                        : difference.upper < 0
                            ? "\(who) lowers conversion: \(range)."
                            : comparisons == 1
                                ? "No difference detected: \(range); the interval includes 0."
                                : "\(who): no difference detected, \(range).")
            }
        }
        if comparisons == 1 {
            difference = arms[1].difference
            significant = arms[1].significant
        } else {
            difference = nil
            significant = arms.dropFirst().contains { $0.significant == true } ? true : enoughData ? false : nil
        }
        if sentences.isEmpty {
            verdict =
                "Not enough data: each arm needs \(minimumPerArm) accounts whose \(Self.days(experiment.windowSeconds)) window has passed ("
                + arms.map { "\($0.arm.rawValue) \($0.analysed)" }.joined(separator: ", ") + ")."
        } else {
            verdict = sentences.joined(separator: " ")
        }
    }

    /// A proportion as signed percentage points with one decimal: `+2.1`, `-0.4`.
    static func points(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 10
        return (rounded > 0 ? "+" : "") + String(format: "%.1f", rounded == 0 ? 0 : rounded)
    }

    /// Seconds as days or hours: "7-day", "36-hour".
    static func days(_ seconds: Double) -> String {
        seconds.truncatingRemainder(dividingBy: 86400) == 0
            ? "\(Int(seconds / 86400))-day" : "\(Int((seconds / 3600).rounded()))-hour"
    }
}
