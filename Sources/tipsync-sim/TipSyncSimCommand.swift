import ArgumentParser
import Foundation
import TipSyncCore
import TipSyncSimulation

/// `tipsync-sim`: seeded simulation of many devices syncing through faults, with shrinking.
@main
struct TipSyncSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tipsync-sim", abstract: "Deterministic simulation of many TipSync devices; replayable histories.",
        subcommands: [Run.self, Live.self, Replay.self, Generate.self, Import.self, ExperimentCommand.self],
        defaultSubcommand: Run.self)

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Generate histories from seeds, replay them, shrink and save any failure.")
        @Option(help: "How many seeds to run.") var seeds = 100
        @Option(help: "Devices per history.") var devices = 3
        @Option(help: "Steps per history.") var steps = 40
        @Option(help: "The first seed (runs seed, seed+1, …).") var seed: UInt64 = 1
        @Option(help: "Where shrunk failing histories are written.") var failures = "sim-failures"

        func run() async throws {
            let simulator = Simulator(
                generator: HistoryGenerator(devices: devices, steps: steps),
                failureDirectory: URL(fileURLWithPath: failures))
            let summary = try await simulator.run(seeds: seeds, from: seed) { failure in
                print("seed \(failure.seed): \(failure.violations.first ?? "")")
                print("  shrunk to \(failure.shrunk.steps.count) steps: \(failure.file?.path ?? "")")
            }
            print(summary)
            if !summary.failures.isEmpty { throw ExitCode(1) }
        }
    }

    struct Live: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Devices running the real sync loop through random schedules: liveness and convergence.",
            discussion: """
                Each seed runs its devices' SyncClient.run() loops against the in-process server while local \
                changes, lost requests and answers, 429, 500, expired tokens, a clock-skewed device, server \
                restarts and outages and app relaunches happen at random moments. A change made while \
                online must be on the server and merged by every running device once the fleet settles; \
                after the schedule, within --rounds rounds.
                """)
        @Option(help: "How many seeds to run.") var seeds = 100
        @Option(help: "Devices per schedule.") var devices = 3
        @Option(help: "Steps per schedule.") var steps = 30
        @Option(help: "The first seed (runs seed, seed+1, …).") var seed: UInt64 = 1
        @Option(help: "Rounds after the schedule within which everything must arrive everywhere.") var rounds = 3

        func run() async throws {
            let simulation = LiveSimulation(devices: devices, steps: steps, roundLimit: rounds)
            var failures = 0
            var diverged = 0
            var stranded = 0
            var changes = 0
            var roundsNeeded: [Int: Int] = [:]
            for seed in seed..<(seed + UInt64(seeds)) {
                let outcome = try await simulation.run(seed: seed)
                changes += outcome.changes
                roundsNeeded[outcome.rounds, default: 0] += 1
                guard !outcome.passed else { continue }
                failures += 1
                if outcome.violations.contains(where: { $0.contains("convergence") }) { diverged += 1 }
                if outcome.violations.contains(where: { $0.contains("stranded") || $0.contains("liveness") }) {
                    stranded += 1
                }
                print("seed \(seed): \(outcome.violations.joined(separator: "\n  "))")
            }
            let histogram = roundsNeeded.keys.sorted().map { "\($0): \(roundsNeeded[$0]!)" }.joined(separator: ", ")
            print(
                "seeds: \(seeds), local changes: \(changes), failed: \(failures), diverged: \(diverged), "
                    + "stranded or late: \(stranded); rounds needed after the schedule (rounds: seeds): \(histogram)")
            if failures > 0 { throw ExitCode(1) }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replay history files and check the invariants.")
        @Argument(help: "History JSON files.") var files: [String]
        @Option(help: "Also replay this many permuted delivery orders of each.") var permutations = 0

        func run() async throws {
            var failed = false
            for file in files {
                let history = try History.load(URL(fileURLWithPath: file))
                for variant in 0...permutations {
                    let run = variant == 0 ? history : history.permutedDelivery(seed: UInt64(variant))
                    let outcome = try await Replayer().replay(run)
                    let label = variant == 0 ? "recorded order" : "permutation \(variant)"
                    print("\(file) (\(label)): \(outcome.passed ? "ok" : "FAILED")")
                    for violation in outcome.violations { print("  \(violation)") }
                    failed = failed || !outcome.passed
                }
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the history a seed generates, without running it.")
        @Option(help: "The seed.") var seed: UInt64
        @Option(help: "Devices per history.") var devices = 3
        @Option(help: "Steps per history.") var steps = 40
        @Option(name: .shortAndLong, help: "The history file to write.") var output: String

        func run() async throws {
            let history = HistoryGenerator(devices: devices, steps: steps).history(seed: seed)
            try Data(history.json().utf8).write(to: URL(fileURLWithPath: output))
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn `tipsync-agent export-history` files into one history.")
        @Argument(help: "Export files, one per device.") var exports: [String]
        @Option(name: .shortAndLong, help: "The history file to write.") var output: String
        @Option(help: "The catalog the devices used (default: the simulation catalog).") var catalog: String?

        func run() async throws {
            var history = try HistoryImport.history(
                fromExports: try exports.map { try Data(contentsOf: URL(fileURLWithPath: $0)) })
            if let catalog {
                history.catalog = try JSONCoding.decoder.decode(
                    Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: catalog)))
            }
            try Data(history.json().utf8).write(to: URL(fileURLWithPath: output))
            print("wrote \(output): \(history.devices.count) devices, \(history.steps.count) steps")
        }
    }
}
