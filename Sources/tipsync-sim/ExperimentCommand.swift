import ArgumentParser
import Foundation
import TipSyncOperatorService
import TipSyncSimulation

/// `tipsync-sim experiment`: seeded runs of an experiment with a known truth — the interval's
/// coverage of the true difference and, with equal rates, how often an A/A test is called significant.
struct ExperimentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "experiment",
        abstract:
            "Simulate experiments with a known effect: how often the 95% interval covers it, and how often an A/A test looks significant."
    )
    @Option(help: "Seeded runs of each.") var runs = 100
    @Option(help: "Accounts per run.") var accounts = 20_000
    @Option(help: "Percent held out.") var holdout = 10.0
    @Option(help: "The holdout's true conversion rate.") var holdoutRate = 0.10
    @Option(help: "The treatment's true conversion rate.") var treatmentRate = 0.12
    @Option(help: "The first seed.") var seed: UInt64 = 1

    func run() async throws {
        for (name, treated) in [("effect", treatmentRate), ("A/A", holdoutRate)] {
            let simulation = ExperimentSimulation(
                accounts: accounts, holdoutPercent: holdout, holdoutRate: holdoutRate, treatmentRate: treated)
            let started = ContinuousClock.now
            let results = await withTaskGroup(of: ExperimentSimulation.Run.self) { group in
                for offset in 0..<UInt64(runs) { group.addTask { simulation.run(seed: seed + offset) } }
                var all: [ExperimentSimulation.Run] = []
                for await run in group { all.append(run) }
                return all
            }
            let covering = results.filter(\.covers).count
            let significant = results.filter { $0.results.significant == true }.count
            let misderived = results.reduce(0) { $0 + $1.misderived }
            let analysed = results.map { $0.results.arms.map(\.analysed) }
            let holdoutSizes = analysed.map { $0[0] }
            print(
                "\(name): \(runs) runs of \(accounts) accounts (\(holdout)% held out, rates \(holdoutRate) / \(treated)): interval covers the truth in \(covering) of \(runs); significant in \(significant) of \(runs); held-out accounts analysed \(holdoutSizes.min() ?? 0)–\(holdoutSizes.max() ?? 0); accounts misderived \(misderived); \(ContinuousClock.now - started)"
            )
        }
    }
}
