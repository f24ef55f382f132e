import Testing
import TipSyncOperatorService
import TipSyncSimulation

/// The statistics of experiments, proved by simulation with a known truth (issue 57, item 5): over
/// 100 seeded runs — devices offline and reporting late, conversions in and out of the window, the
/// server's derivation and analysis — the 95% interval covers the true difference at least 94 times,
/// and an A/A experiment is called significant at most 6 times. Every run is seeded, so this is
/// exact, not a chance. The full-size runs (20,000 accounts, 10% held out) are `tipsync-sim
/// experiment`, recorded in BENCHMARKS.md.
@Suite struct ExperimentSimulationTests {
    static let runs: UInt64 = 100

    @Test func theIntervalCoversAKnownEffectAndAnAATestIsRarelySignificant() async throws {
        for (treated, isAA) in [(0.15, false), (0.10, true)] {
            let simulation = ExperimentSimulation(
                accounts: 600, holdoutPercent: 50, holdoutRate: 0.10, treatmentRate: treated)
            // One run at a time, yielding between runs: each is tens of milliseconds of synchronous
            // work, and running them all at once on the cooperative pool's two threads starved the
            // suite's in-process servers ("I/O on closed channel" in RequestMetricsTests on CI).
            var runs: [ExperimentSimulation.Run] = []
            for seed in 1...Self.runs {
                runs.append(simulation.run(seed: seed))
                await Task.yield()
            }
            // Late devices and out-of-window goals never change what an account is credited with.
            #expect(runs.allSatisfy { $0.misderived == 0 })
            #expect(runs.allSatisfy { $0.results.enoughData })
            let covering = runs.filter(\.covers).count
            let significant = runs.filter { $0.results.significant == true }.count
            #expect(covering >= 94, "covered in \(covering) of \(Self.runs)")
            if isAA {
                #expect(significant <= 6, "A/A significant in \(significant) of \(Self.runs)")
            } else {
                // Power: 10% against 15% with 300 accounts per arm is found about 44% of the time in
                // theory (the normal approximation); the runs agree within their sampling error.
                #expect((30...60).contains(significant), "found in \(significant) of \(Self.runs)")
            }
        }
    }
}
