import ArgumentParser
import Foundation
import TipSyncCore
import TipSyncServer

/// `tipsync-server experiment …`: what `/admin/v1/experiments` does, from a shell on the server
/// (protocol.md §13.12). Starting and stopping store a new catalog version, which running servers
/// notice within about a second and pass to their devices.
struct ExperimentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "experiment",
        abstract:
            "Randomized holdouts on tips: start, stop, list, read results, export per-account records, size one.",
        subcommands: [List.self, Start.self, Stop.self, Results.self, Export.self, SampleSizeCommand.self])

    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every experiment of the stored catalog: its tip, holdout, state and verdict.")
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            let all = try await databaseOptions.withStore { store in
                try await TipUsageDerivation(store).summarizeAccountsWithNewChanges()
                var results: [ExperimentResults] = []
                for (_, experiment) in try await ExperimentControl(store).experiments() {
                    if let each = try await ExperimentControl(store).experimentResults(
                        experiment.id, now: ExperimentCommand.now)
                    {
                        results.append(each)
                    }
                }
                return results
            }
            if all.isEmpty { print("no experiments; start one with 'tipsync-server experiment start TIP …'") }
            for results in all {
                let reached = results.arms.map { "\($0.arm.rawValue) \($0.reached)" }.joined(separator: ", ")
                print(
                    "\(results.experiment.id)\ttip \(results.tip)\t\(results.experiment.holdout)% held out\t\(results.state)\treached: \(reached)\t\(results.verdict)"
                )
            }
        }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start an experiment on a tip of the stored catalog (a new catalog version).")
        @Argument(help: "The tip's id.") var tip: String
        @Option(help: "The experiment's id: 1 to 64 ASCII letters, digits, '-', '_' and '.'.") var id: String
        @Option(help: "Percent of accounts held out: above 0, below 100, in steps of 0.01.") var holdout: Double
        @Option(help: "The goal: a donation to this event (declared by the catalog).") var goalEvent: String?
        @Flag(help: "The goal: the tip invalidated with actionPerformed.") var goalActionPerformed = false
        @Option(help: "Seconds after an account's first reach within which its goal counts (3600 to 7776000).")
        var window: Double?
        @OptionGroup var databaseOptions: DatabaseOptions

        func validate() throws {
            if (goalEvent == nil) == !goalActionPerformed {
                throw ValidationError("give one goal: --goal-event EVENT or --goal-action-performed")
            }
            if let problem = TipExperiment.idProblem(id) { throw ValidationError("--id: \(problem)") }
        }

        func run() async throws {
            let experiment = TipExperiment(
                id: id, holdout: holdout, goal: goalEvent.map { .event($0) } ?? .actionPerformed, window: window)
            let version = try await databaseOptions.withStore { store in
                do {
                    return try await ExperimentControl(store).startExperiment(
                        experiment, onTip: tip, by: "cli", at: ExperimentCommand.now)
                } catch let error as CatalogCompositionError {
                    throw CommandFailure(error.description)
                }
            }
            print("started experiment '\(id)' on tip '\(tip)' holding out \(holdout)%: catalog version \(version)")
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop an experiment now: nobody is held out from then on; its results stay readable.")
        @Argument(help: "The experiment's id.") var id: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            let version = try await databaseOptions.withStore { store in
                do {
                    return try await ExperimentControl(store).stopExperiment(id, by: "cli", at: ExperimentCommand.now)
                } catch let error as CatalogCompositionError {
                    throw CommandFailure(error.description)
                }
            }
            guard let version else {
                throw CommandFailure("no experiment '\(id)' in the stored catalog; 'tipsync-server experiment list'")
            }
            print("stopped experiment '\(id)': catalog version \(version)")
        }
    }

    struct Results: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "An experiment's results per arm, the difference with its 95% interval, and the sample size, as of now (accounts whose log grew are summarized first)."
        )
        @Argument(help: "The experiment's id.") var id: String
        @Option(help: "The minimum detectable effect to size for, as a difference of rates.") var effect: Double =
            ExperimentResults.defaultEffect
        @Flag(help: "Print the JSON of GET /admin/v1/experiments/{id}.") var json = false
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            guard
                let results = try await databaseOptions.withStore({ store in
                    try await TipUsageDerivation(store).summarizeAccountsWithNewChanges()
                    return try await ExperimentControl(store).experimentResults(
                        id, now: ExperimentCommand.now, effect: effect)
                })
            else {
                throw CommandFailure("no experiment '\(id)' in the stored catalog; 'tipsync-server experiment list'")
            }
            if json {
                print(String(decoding: try JSONCoding.encoder.encode(results), as: UTF8.self))
                return
            }
            print("\(id) on tip \(results.tip): \(results.state), \(results.experiment.holdout)% held out")
            for arm in results.arms {
                print(
                    "  \(arm.arm.rawValue):\treached \(arm.reached), exposed \(arm.exposed), converted \(arm.conversionSummary)"
                )
            }
            print(results.verdict)
            if let size = results.sampleSize {
                print(
                    "To detect \(String(format: "%.1f", results.minimumDetectableEffect * 100)) points: \(size.holdout) held-out and \(size.treatment) treated accounts analysed."
                )
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every reached account's record, as CSV (default) or JSON, for analysis elsewhere.")
        @Argument(help: "The experiment's id.") var id: String
        @Option(help: "csv or json.") var format: String = "csv"
        @OptionGroup var databaseOptions: DatabaseOptions

        func validate() throws {
            guard format == "csv" || format == "json" else { throw ValidationError("--format: csv or json") }
        }

        func run() async throws {
            let text = try await databaseOptions.withStore { store in
                guard try await ExperimentControl(store).experiment(id) != nil else {
                    throw CommandFailure(
                        "no experiment '\(id)' in the stored catalog; 'tipsync-server experiment list'")
                }
                try await TipUsageDerivation(store).summarizeAccountsWithNewChanges()
                return try await ExperimentControl(store).experimentParticipantsText(id, csv: format == "csv")
            }
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }

    struct SampleSizeCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sample-size",
            abstract:
                "Accounts an experiment needs per arm to detect an effect (5% significance, 80% power).")
        @Option(help: "The holdout's conversion rate, such as 0.10.") var baseline: Double
        @Option(help: "The minimum detectable effect, a difference of rates such as 0.02.") var effect: Double
        @Option(help: "Percent of accounts held out.") var holdout: Double

        func run() async throws {
            guard let size = SampleSize(baseline: baseline, effect: effect, holdoutPercent: holdout) else {
                throw CommandFailure(
                    "a baseline rate and baseline + effect within (0, 1), an effect other than 0, a holdout within (0, 100)"
                )
            }
            print(
                "\(size.holdout) held-out and \(size.treatment) treated accounts reached (\(size.total) in all)")
        }
    }
}
