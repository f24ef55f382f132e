import Foundation
import Testing
@_spi(Simulation) import TipSync
@_spi(Simulation) import TipSyncSimulation
import TipSyncTestSupport

@testable import TipSyncCore

/// The fixture corpus: hand-written classic conflicts and every shrunk failure the simulator found.
let fixtureFiles: [URL] = {
    let directory = Bundle.module.resourceURL!.appendingPathComponent("Histories")
    return (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil))?
        .filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent } ?? []
}()

@Suite struct FixtureReplayTests {
    @Test func theCorpusHasTheClassicCases() {
        let names = Set(fixtureFiles.map { $0.deletingPathExtension().lastPathComponent })
        for classic in [
            "concurrent-dismiss-and-display", "dismiss-vs-stale-parameter", "reset-racing-dismiss",
            "offline-after-compaction", "duplicate-push-after-server-crash", "skewed-clock",
        ] {
            #expect(names.contains(classic))
        }
    }

    @Test(arguments: fixtureFiles.map(\.lastPathComponent))
    func fixtureConvergesInRecordedAndPermutedOrders(_ name: String) async throws {
        try await ComputeBoundTests.run {
            let history = try History.load(fixtureFiles.first { $0.lastPathComponent == name }!)
            for variant in 0...3 {
                let run = variant == 0 ? history : history.permutedDelivery(seed: UInt64(variant))
                let outcome = try await Replayer().replay(run)
                #expect(outcome.violations.isEmpty, "\(name), \(variant == 0 ? "recorded" : "permutation \(variant)")")
            }
        }
    }

    @Test func theClassicCasesEndAsTheProtocolSays() async throws {
        // Spot checks on top of the invariants: the dismissal raced by displays stays a dismissal.
        let history = try History.load(
            fixtureFiles.first { $0.lastPathComponent == "concurrent-dismiss-and-display.json" }!)
        let outcome = try await Replayer().replay(history)
        #expect(outcome.passed)
        #expect(outcome.fingerprint.contains(#"state:"invalidated" reason:"tipClosed""#))
    }
}

@Suite struct GeneratedHistoryTests {
    /// 200 seeds per run, in four parallel slices.
    @Test(arguments: 0..<4)
    func seedsConverge(slice: Int) async throws {
        try await ComputeBoundTests.run {
            let simulator = Simulator(generator: HistoryGenerator(devices: 3, steps: 40))
            let summary = try await simulator.run(seeds: 50, from: 10_000 + UInt64(slice) * 50)
            print("slice \(slice): \(summary)")
            #expect(
                summary.failures.isEmpty, "\(summary.failures.map { "seed \($0.seed): \($0.violations.first ?? "")" })")
            #expect(summary.seeds == 50)
        }
    }

    @Test func theSameHistoryGivesIdenticalDatabases() async throws {
        let history = HistoryGenerator(devices: 3, steps: 60).history(seed: 424_242)
        #expect(HistoryGenerator(devices: 3, steps: 60).history(seed: 424_242) == history)
        let first = try await Replayer().replay(history)
        let second = try await Replayer().replay(history)
        #expect(first.passed && second.passed)
        #expect(first.fingerprint == second.fingerprint)
        #expect(first.fingerprint.contains("# d0") && first.fingerprint.contains("# server"))
    }

    @Test func historiesRoundTripThroughJSON() throws {
        let history = HistoryGenerator(devices: 4, steps: 80).history(seed: 7)
        let decoded = try JSONDecoder().decode(History.self, from: Data(history.json().utf8))
        #expect(decoded == history)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                History.self, from: Data(#"{"format":"other","version":1,"devices":[],"steps":[]}"#.utf8))
        }
    }
}

/// The simulator must catch a broken merge rule and shrink the history that shows it.
@Suite struct BrokenMergeTests {
    /// "A display clears an invalidation": the bug dismissed-stays-dismissed exists to prevent.
    static let displayClearsInvalidation = ReplicaMerge { state, change, limits in
        let changed = state.apply(change, donationLimits: limits)
        if case .display(let tip, _, _, _, _) = change.operation, state.tips[tip]?.eligibility != nil {
            state.tips[tip]?.eligibility = nil
            return true
        }
        return changed
    }

    /// "LWW-merging a counter": the latest display counter replaces every other device's.
    static let lastWriterWinsCounter = ReplicaMerge { state, change, limits in
        if case .display(let tip, let epoch, let count, let duration, let last) = change.operation {
            let key = DisplayCounter.Key(device: change.device, epoch: epoch)
            let counter = DisplayCounter(count: count, duration: duration, lastDisplayed: last)
            guard state.displays[tip] != [key: counter] else { return false }
            state.displays[tip] = [key: counter]
            return true
        }
        return state.apply(change, donationLimits: limits)
    }

    @Test(arguments: [("display clears invalidation", 0), ("LWW counter", 1)])
    func aBrokenMergeFailsAndShrinksToASmallHistory(_ name: String, _ which: Int) async throws {
        try await ComputeBoundTests.run {
            let merge = which == 0 ? Self.displayClearsInvalidation : Self.lastWriterWinsCounter
            let simulator = Simulator(
                generator: HistoryGenerator(devices: 3, steps: 40), replayer: Replayer(merge: merge))
            // Find the seeds that catch it, then shrink the first (shrinking each one it catches took
            // two minutes of a debug build for the one the test looks at).
            let caught = try await simulator.run(seeds: 20, from: 1, shrink: false)
            let seed = try #require(caught.failures.first?.seed, "\(name): no seed caught the broken merge")
            let failure = try #require(try await simulator.run(seeds: 1, from: seed).failures.first)
            print(
                "\(name): seed \(failure.seed), \(failure.violations.count) violations, shrunk to \(failure.shrunk.steps.count) steps"
            )
            #expect(failure.shrunk.steps.count <= 8)
            #expect(
                failure.shrunk.steps.count
                    < HistoryGenerator(devices: 3, steps: 40).history(seed: failure.seed).steps.count
            )
            // The shrunk history still fails with the broken merge and passes with the real one.
            #expect(try await !Replayer(merge: merge).replay(failure.shrunk).passed)
            #expect(try await Replayer().replay(failure.shrunk).passed)
        }
    }
}

@Suite struct HistoryImportTests {
    @Test func agentExportsBecomeAReplayableHistory() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-import-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let phone = try TipsReplica(
            directory: root.appendingPathComponent("phone"), deviceID: "phone", clock: clock.clock)
        let laptop = try TipsReplica(
            directory: root.appendingPathComponent("laptop"), deviceID: "laptop", clock: clock.clock)
        try phone.recordDisplay(tip: "twice", duration: 2)
        clock.advance(by: 1)
        try laptop.invalidate(tip: "twice", reason: .tipClosed)
        try laptop.donate(event: "opened", info: .object(["n": .int(1)]))
        clock.advance(by: 1)
        try phone.recordDisplay(tip: "twice", duration: 3)
        func export(_ replica: TipsReplica) throws -> Data {
            let changes = try replica.localChanges().map(\.canonicalJSON).joined(separator: ",")
            return Data(
                #"{"format":"tipsync-export","version":1,"device":"\#(replica.deviceID)","changes":[\#(changes)]}"#.utf8
            )
        }
        let history = try HistoryImport.history(fromExports: [try export(phone), try export(laptop)])
        #expect(history.devices.map(\.id) == ["phone", "laptop"])
        #expect(history.steps.filter(\.isDeviceOperation).map(\.op) == [.display, .invalidate, .donate, .display])
        #expect(history.steps.filter { $0.op == .display }.map(\.duration) == [2, 3])
        let outcome = try await Replayer().replay(history)
        #expect(outcome.passed, "\(outcome.violations)")
    }
}
