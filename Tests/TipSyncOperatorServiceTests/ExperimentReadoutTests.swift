import Foundation
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 73, item 6: `results` printed `converted 0 (—)` beside three conversions whose windows were
/// still open; the CSV export gave milliseconds in the store's order; the console's sentence on the
/// confidence used with variants did not follow the experiment (it said 95% on an experiment
/// without variants, where the README gives 97.5% each for two).
@Suite struct ExperimentReadoutTests {
    typealias Stats = ExperimentStatisticsTests

    @Test func conversionsWaitingForTheirWindowsAreSaidSo() {
        // Three treated accounts reached a moment ago converted; none is analysable yet.
        let results = ExperimentResults(
            tip: "search", experiment: Stats.experiment,
            participants: Stats.participants(.treatment, 3, converted: 3, reachedAt: 86_000_000), now: 86_400_000)
        let treatment = results.arms[1]
        #expect(treatment.converted == 0 && treatment.convertedSoFar == 3)
        #expect(treatment.conversionSummary == "0 of 0 analysed (—; 3 more converted so far, their windows still open)")
        let settled = ExperimentResults(
            tip: "search", experiment: Stats.experiment,
            participants: Stats.participants(.treatment, 4, converted: 1), now: 86_400_000)
        #expect(settled.arms[1].conversionSummary == "1 of 4 analysed (25.0%)")
    }

    @Test func theConfidenceSentenceFollowsTheExperimentAndTheReadme() throws {
        let one = ExperimentResults(tip: "search", experiment: Stats.experiment, participants: [], now: 0)
        #expect(one.confidenceSentence == "The difference from the holdout is given with its 95% interval.")
        var two = Stats.experiment
        two.variants = [.init(id: "short", title: "S"), .init(id: "long", title: "L")]
        let results = ExperimentResults(tip: "search", experiment: two, participants: [], now: 0)
        #expect(
            results.confidenceSentence
                == "Each of the 2 variants is compared with the holdout at 97.5%, so that the chance of any false difference stays at 5%."
        )
        // The README says the same figure.
        let readme = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("at 97.5% each for two"))
    }

    @Test func theCSVGivesISOTimesInAStableOrder() {
        let rows = [
            ExperimentParticipantRecord(
                account: "zed",
                ExperimentParticipation(
                    experiment: "x", arm: .treatment, reachedAt: 1_765_005_243_250, exposedAt: nil, convertedAt: nil)),
            ExperimentParticipantRecord(
                account: "amy",
                ExperimentParticipation(
                    experiment: "x", arm: .holdout, reachedAt: 0, exposedAt: nil, convertedAt: 86_400_001)),
        ]
        #expect(
            ExperimentParticipantRecord.csv(rows)
                == "account,arm,reachedAt,exposedAt,convertedAt\r\n"
                + "amy,holdout,1970-01-01T00:00:00.000Z,,1970-01-02T00:00:00.001Z\r\n"
                + "zed,treatment,2025-12-06T07:14:03.250Z,,\r\n")
        #expect(ExperimentParticipantRecord.csv(rows.reversed()) == ExperimentParticipantRecord.csv(rows))
    }
}
