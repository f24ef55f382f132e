import Foundation
import Testing
import TipSync
import TipSyncServerTestSupport
import TipSyncTestSupport

/// `kill -9` at random points while devices push: after every restart each acknowledged change is
/// there, unchanged, and no batch is half stored. Real `tipsync-server` processes, on SQLite and on
/// a throwaway PostgreSQL.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CrashConsistencyTests {
    @Test func sqliteLosesNothingAcknowledgedAcrossKills() async throws {
        let directory = Scratch.path("tipsync-crash")
        try await Self.run(database: "sqlite:" + directory.appendingPathComponent("server.sqlite").path, seed: 11)
    }

    @Test func postgresLosesNothingAcknowledgedAcrossKills() async throws {
        try await Self.run(database: try await ThrowawayPostgres.freshDatabase(), seed: 12)
    }

    static let devices = ["w1", "w2", "w3", "w4"]

    /// The ledger expects every seq a device pushed: automatic compaction would rightly drop
    /// superseded parameter sets once the account passes 10,000 entries, and a rate limit would end
    /// a writer early. Neither is what this test is about.
    static let serverArguments = ["--auto-compact-after", "0", "--rate-requests", "0", "--rate-changes", "0"]

    static func run(database: String, seed: UInt64, cycles: Int = 10) async throws {
        let created = try await ServerProcess.run(["accounts", "create", "crash", "--database", database])
        #expect(created.status == 0)
        var tokens: [String: String] = [:]
        for device in devices {
            tokens[device] = try await ServerProcess.run([
                "tokens", "create", "--account", "crash", "--device", device, "--database", database,
            ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var random = SeededGenerator(seed: seed)
        let ledger = Ledger()
        for cycle in 0..<cycles {
            let server = try await ServerUnderTest.start(database: database, arguments: serverArguments)
            // After the restart: everything acknowledged is there, unchanged; no batch is half stored.
            let stored = try await server.pullAll(token: tokens["w1"]!)
            try await ledger.verify(stored: stored, cycle: cycle)
            // Writers resume from what the server holds, and push until the kill.
            let writers = devices.map { device in
                let start = stored.filter { $0.device == device }.map(\.seq).max() ?? 0
                let batchSizes = (0..<10_000).map { _ in Int(random.next() % 40) + 1 }
                let token = tokens[device]!
                return Task {
                    await server.push(device: device, token: token, from: start + 1, sizes: batchSizes, into: ledger)
                }
            }
            // The kill lands anywhere: between pushes, inside a transaction, during a commit.
            let delay = 30 + Int(random.next() % 400)
            try await Task.sleep(for: .milliseconds(delay))
            await server.kill()
            for writer in writers { await writer.value }
        }
        let server = try await ServerUnderTest.start(database: database, arguments: serverArguments)
        try await ledger.verify(stored: try await server.pullAll(token: tokens["w1"]!), cycle: cycles)
        let acknowledged = await ledger.acknowledgedCount
        #expect(acknowledged > 0, "the writers got no push acknowledged: the test proved nothing")
        await server.kill()
    }

    /// What was sent and what was acknowledged.
    actor Ledger {
        /// Every change ever sent, by device and seq (a re-sent seq carries the same change).
        var sent: [String: [Int64: Change]] = [:]
        /// Batch boundaries per device: a stored log may end only at one of these.
        var boundaries: [String: Set<Int64>] = [:]
        var acknowledged: [String: Int64] = [:]

        var acknowledgedCount: Int64 { acknowledged.values.reduce(0, +) }

        func attempt(_ batch: [Change]) {
            guard let last = batch.last else { return }
            for change in batch { sent[change.device, default: [:]][change.seq] = change }
            boundaries[last.device, default: [0]].insert(last.seq)
        }

        func acknowledge(device: String, through seq: Int64) {
            acknowledged[device] = max(acknowledged[device] ?? 0, seq)
        }

        func verify(stored: [Change], cycle: Int) throws {
            let byDevice = Dictionary(grouping: stored, by: \.device)
            for device in CrashConsistencyTests.devices {
                let changes = byDevice[device] ?? []
                let seqs = changes.map(\.seq)
                let highest = seqs.max() ?? 0
                #expect(seqs.sorted() == Array(stride(from: 1, through: highest, by: 1)), "gap, cycle \(cycle)")
                #expect(highest >= acknowledged[device] ?? 0, "\(device) lost acknowledged changes in cycle \(cycle)")
                #expect(
                    boundaries[device, default: [0]].contains(highest), "\(device) has half a batch in cycle \(cycle)")
                for change in changes {
                    #expect(sent[device]?[change.seq] == change, "\(device):\(change.seq) altered")
                }
            }
        }
    }
}

extension ServerUnderTest {
    /// Pushes batches of `sizes` until a push fails (the server was killed).
    func push(device: String, token: String, from first: Int64, sizes: [Int], into ledger: CrashConsistencyTests.Ledger)
        async
    {
        var next = first
        for size in sizes {
            let batch = (0..<Int64(size)).map { offset in
                let seq = next + offset
                return Change(
                    device: device, seq: seq,
                    hlc: HLC(
                        milliseconds: UInt64(Date().timeIntervalSince1970 * 1000),
                        counter: UInt16(truncatingIfNeeded: seq)),
                    operation: seq.isMultiple(of: 3)
                        ? .parameter(id: "\(device).p\(seq % 7)", value: .int(seq))
                        : .donation(
                            event: "e", id: "\(device):\(seq)", date: 1_700_000_000_000 + seq,
                            info: .string("x\(seq)")))
            }
            await ledger.attempt(batch)
            guard let body = try? JSONCoding.encoder.encode(PushRequest(changes: batch)),
                let (status, data) = try? await RawConnection.exchange(
                    port: port, method: "POST", path: "/v1/push",
                    headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
                    body: Array(body)),
                status == 200, let outcome = try? JSONCoding.decode(PushResponse.self, from: data)
            else { return }
            await ledger.acknowledge(device: device, through: outcome.highestSeq)
            next = outcome.highestSeq + 1
        }
    }
}
