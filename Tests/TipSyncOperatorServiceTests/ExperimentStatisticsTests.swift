import Foundation
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// The statistics of an experiment's results (protocol.md §13.12), against published values.
@Suite struct ExperimentStatisticsTests {
    func close(_ a: Double, _ b: Double, within tolerance: Double = 0.0001) -> Bool { abs(a - b) <= tolerance }

    /// Wilson's interval as tabulated (Newcombe 1998, Table I; Agresti & Coull 1998): 0/10 →
    /// [0, 0.2775], 1/10 → [0.0179, 0.4042], 81/263 → [0.2553, 0.3662].
    @Test func wilsonIntervalsAreThePublishedOnes() {
        let zero = ProportionDifference.wilson(0, 10)
        #expect(zero.lower == 0 && close(zero.upper, 0.2775))
        let one = ProportionDifference.wilson(1, 10)
        #expect(close(one.lower, 0.0179) && close(one.upper, 0.4042))
        let many = ProportionDifference.wilson(81, 263)
        #expect(close(many.lower, 0.2553) && close(many.upper, 0.3662))
    }

    /// Newcombe's hybrid score interval (his method 10) from its definition, and what makes it the
    /// right one for tips: inside [-1, 1] at the extremes, 0 inside for equal arms, symmetric.
    @Test func theDifferenceIntervalIsNewcombesHybridScoreInterval() throws {
        let d = try #require(ProportionDifference(successes: 56, of: 70, minus: 48, of: 80))
        #expect(close(d.estimate, 0.2))
        let (l1, u1) = ProportionDifference.wilson(56, 70)
        let (l2, u2) = ProportionDifference.wilson(48, 80)
        #expect(close(d.lower, 0.2 - ((0.8 - l1) * (0.8 - l1) + (u2 - 0.6) * (u2 - 0.6)).squareRoot(), within: 1e-12))
        #expect(close(d.upper, 0.2 + ((u1 - 0.8) * (u1 - 0.8) + (0.6 - l2) * (0.6 - l2)).squareRoot(), within: 1e-12))
        // Newcombe 1998, Table II, example (a) 56/70 − 48/80, method 10: 0.0524 to 0.3339.
        #expect(close(d.lower, 0.0524) && close(d.upper, 0.3339))
        let extreme = try #require(ProportionDifference(successes: 10, of: 10, minus: 0, of: 10))
        #expect(extreme.upper <= 1 && extreme.lower > 0)
        let equal = try #require(ProportionDifference(successes: 12, of: 100, minus: 12, of: 100))
        #expect(equal.lower < 0 && equal.upper > 0 && !equal.isSignificant)
        let flipped = try #require(ProportionDifference(successes: 48, of: 80, minus: 56, of: 70))
        #expect(close(flipped.lower, -d.upper, within: 1e-12) && close(flipped.upper, -d.lower, within: 1e-12))
        #expect(ProportionDifference(successes: 0, of: 0, minus: 1, of: 2) == nil)
    }

    /// The standard two-proportion size: 10% against 12% with equal arms needs 3,841 accounts per
    /// arm at 5% significance and 80% power (the figure every calculator without continuity
    /// correction gives); a 10% holdout needs fewer held out and more treated.
    @Test func sampleSizesAreTheTextbookOnes() throws {
        let equal = try #require(SampleSize(baseline: 0.10, effect: 0.02, holdoutPercent: 50))
        #expect(equal.holdout == 3841 && equal.treatment == 3841)
        let tenth = try #require(SampleSize(baseline: 0.10, effect: 0.02, holdoutPercent: 10))
        #expect(tenth.holdout < equal.holdout && tenth.total > equal.total)
        #expect(tenth.treatment >= tenth.holdout * 9)
        #expect(SampleSize(baseline: 0, effect: 0.02, holdoutPercent: 10) == nil)
        #expect(SampleSize(baseline: 0.99, effect: 0.02, holdoutPercent: 10) == nil)
        #expect(SampleSize(baseline: 0.1, effect: 0, holdoutPercent: 10) == nil)
        #expect(SampleSize(baseline: 0.1, effect: 0.02, holdoutPercent: 100) == nil)
    }

    static let experiment = TipExperiment(id: "search-holdout", holdout: 50, goal: .event("searched"), window: 86400)

    static func participants(_ arm: TipExperiment.Arm, _ count: Int, converted: Int, reachedAt: Int64 = 0)
        -> [ExperimentParticipation]
    {
        (0..<count).map { index in
            ExperimentParticipation(
                experiment: "search-holdout", arm: arm, reachedAt: reachedAt, exposedAt: arm == .treatment ? 1 : nil,
                convertedAt: index < converted ? reachedAt + 1000 : nil)
        }
    }

    @Test func belowTheMinimumPerArmTheResultsSayNotEnoughData() {
        let results = ExperimentResults(
            tip: "search", experiment: Self.experiment,
            participants: Self.participants(.holdout, 99, converted: 10)
                + Self.participants(.treatment, 500, converted: 100),
            now: 86_400_000)
        #expect(!results.enoughData)
        #expect(results.difference == nil && results.significant == nil)
        #expect(results.verdict.hasPrefix("Not enough data"))
        #expect(results.arms.map(\.analysed) == [99, 500])
        // The holdout's rate is the baseline the sample size is computed from.
        #expect(results.sampleSize != nil)
    }

    @Test func onlyAccountsWhoseWindowHasPassedAreAnalysed() {
        let open = Self.participants(.treatment, 300, converted: 0, reachedAt: 10_000)
        let results = ExperimentResults(
            tip: "search", experiment: Self.experiment,
            participants: Self.participants(.holdout, 200, converted: 20)
                + Self.participants(.treatment, 200, converted: 50)
                + open,
            now: 86_400_000)
        #expect(results.arms[1].reached == 500 && results.arms[1].analysed == 200)
        #expect(results.arms[1].exposed == 500)
        #expect(results.enoughData && results.significant == true)
        #expect(close(results.difference!.estimate, 0.15))
        #expect(results.verdict.hasPrefix("The tip raises conversion: +15.0 points"))
        // A stopped experiment analyses only windows that ended before it stopped.
        var stopped = Self.experiment
        stopped.stoppedAt = 86_400_000 + 5_000
        let later = ExperimentResults(
            tip: "search", experiment: stopped,
            participants: Self.participants(.holdout, 200, converted: 20) + open, now: 10 * 86_400_000)
        #expect(later.state == "stopped" && later.arms[1].analysed == 0)
    }

    @Test func theNormalQuantileIsTheTabulatedOne() {
        #expect(ProportionDifference.z(confidence: 0.95) == ProportionDifference.z95)
        #expect(close(ProportionDifference.z(confidence: 0.975), 2.241403, within: 1e-6))
        #expect(close(ProportionDifference.z(confidence: 0.99), 2.575829, within: 1e-6))
        #expect(close(ProportionDifference.z(confidence: 0.90), 1.644854, within: 1e-6))
        #expect(close(ProportionDifference.z(confidence: 0.9875), 2.497705, within: 1e-6))
    }

    /// Variants: each arm against the holdout, at 97.5% with two (Bonferroni), in the arms' order.
    @Test func eachVariantIsComparedWithTheHoldoutAtAShareOfTheConfidence() throws {
        var experiment = Self.experiment
        experiment.variants = [.init(id: "short"), .init(id: "long")]
        func arm(_ name: String, _ count: Int, converted: Int) -> [ExperimentParticipation] {
            (0..<count).map { index in
                ExperimentParticipation(
                    experiment: "search-holdout", arm: TipExperiment.Arm(rawValue: name)!, reachedAt: 0,
                    exposedAt: name == "holdout" ? nil : 1, convertedAt: index < converted ? 1000 : nil)
            }
        }
        let results = ExperimentResults(
            tip: "search", experiment: experiment,
            participants: arm("holdout", 200, converted: 20) + arm("short", 200, converted: 22)
                + arm("long", 200, converted: 50),
            now: 86_400_000)
        #expect(results.arms.map(\.arm.rawValue) == ["holdout", "short", "long"])
        #expect(results.confidence == 0.975)
        #expect(results.difference == nil)
        let short = try #require(results.arms[1].difference)
        let expected = try #require(
            ProportionDifference(
                successes: 22, of: 200, minus: 20, of: 200, z: ProportionDifference.z(confidence: 0.975)))
        #expect(short == expected)
        #expect(results.arms[1].significant == false && results.arms[2].significant == true)
        #expect(results.significant == true)
        #expect(results.verdict.contains("Variant long raises conversion: +15.0 points (97.5% interval"))
        #expect(results.verdict.contains("Variant short: no difference detected"))
        #expect(results.arms[0].difference == nil)
    }
}
