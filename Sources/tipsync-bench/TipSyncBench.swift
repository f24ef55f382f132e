import ArgumentParser
import Foundation
import TipSync

@main
struct TipSyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tipsync-bench",
        abstract: "Measures TipSync's performance targets. Build with -c release.",
        subcommands: [
            EngineStatus.self, DonationWrite.self, PushIngest.self, ColdPull.self, LiveLatency.self,
            IdleConnections.self, AgentStatus.self, AgentAPI.self,
            HoldConnections.self, LoadTest.self, LoadClients.self, CompactionBench.self, ConsoleBench.self,
            WireBytes.self, Fanout.self, ColdStartPhases.self, PostgresInstances.self, LiveDelivery.self,
            LiveReceivers.self, Fleet.self, PushLatency.self, LivePusher.self, RequestFloor.self, CommitFloor.self,
            NIOFloor.self, IdleDevices.self, IdleApp.self, RecoveryBenchmark.self, ClientStorm.self, SyncClients.self,
        ])
}

/// Status of 100 tips whose events hold 1,000 donations each (target: under 2 ms in total).
struct EngineStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine-status", abstract: "Evaluate the status of N tips whose events hold M donations each.")

    @Option(help: "Number of tips (each with its own event).") var tips = 100
    @Option(help: "Donations per event.") var donations = 1000
    @Option(help: "Timed rounds.") var rounds = 200

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tipsync-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock(Date())
        let replica = try TipsReplica(directory: directory, deviceID: "bench", clock: clock.clock)
        var definitions: [TipDefinition] = []
        for index in 0..<tips {
            let event = "event-\(index)"
            // Donations spread over the last 10 days, with a payload field.
            for chunk in 0..<10 {
                clock.set(Date().addingTimeInterval(Double(chunk - 10) * 86_400))
                try replica.donate(
                    event: event,
                    infos: (0..<(donations / 10)).map { .object(["yardID": .int(Int64($0 % 10))]) })
            }
            definitions.append(
                TipDefinition(
                    id: "tip-\(index)", title: "Tip \(index)",
                    rules: [
                        .compare(
                            .greaterOrEqual, .count(.donatedWithin(.donations(event), seconds: 5 * 86_400)),
                            .literal(.int(3))),
                        .compare(
                            .greaterOrEqual,
                            .count(.filter(.donations(event), .compare(.equal, .field("yardID"), .literal(.int(7))))),
                            .literal(.int(2))),
                    ],
                    options: TipOptions(maxDisplayCount: 3)))
        }
        clock.set(Date())
        var available = 0
        var measurement = Measurement()
        for _ in 0..<rounds {
            try measurement.time {
                available = replica.statuses(of: definitions).filter { $0 == .available }.count
                guard available == tips else { throw ValidationError("expected every tip available, got \(available)") }
            }
        }
        // Cold: no remembered filter results, every donation scanned (the first evaluation after a change).
        let state = replica.state
        var cold = Measurement()
        for _ in 0..<max(1, rounds / 10) {
            try cold.time {
                let evaluator = StatusEvaluator(state: state, now: Date().timeIntervalSince1970)
                let count = definitions.filter { evaluator.status(of: $0) == .available }.count
                guard count == tips else { throw ValidationError("expected every tip available, got \(count)") }
            }
        }
        print(
            "engine-status tips=\(tips) donations/event=\(donations) rounds=\(rounds): "
                + "mean \(format(measurement.mean.milliseconds)) ms, p50 \(format(measurement.percentile(0.5).milliseconds)) ms, "
                + "p99 \(format(measurement.percentile(0.99).milliseconds)) ms per evaluation of all \(tips) tips; "
                + "cold (no cache) mean \(format(cold.mean.milliseconds)) ms")
    }
}

/// Donations written in a burst (target: under 50 µs each, amortised).
struct DonationWrite: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "donation-write", abstract: "Write N donations, one call each, and report the amortised cost.")

    @Option(help: "Donations to write.") var count = 20_000

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tipsync-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let replica = try TipsReplica(directory: directory, deviceID: "bench")
        let event = Tips.Event(id: "burst")
        let clock = ContinuousClock()
        // One call and one transaction per donation, as an app calling `donate()` in a loop does.
        let start = clock.now
        for _ in 0..<count { try event.donate(in: replica) }
        let single = clock.now - start
        // The batch form: one transaction for the whole burst.
        let batchStart = clock.now
        try replica.donate(event: "burst-batch", infos: Array(repeating: nil, count: count))
        let batch = clock.now - batchStart
        print(
            "donation-write count=\(count): one call each \(format(single.microseconds / Double(count), 2)) µs/donation "
                + "(\(format(single.milliseconds, 1)) ms total); batch \(format(batch.microseconds / Double(count), 2)) µs/donation"
        )
    }
}
