import ArgumentParser
import Foundation
import Synchronization
import TipSyncCore
import TipSyncServer
import TipSyncTestSupport

/// How long compacting an account takes, and what it costs pushes meanwhile: single-change pushes
/// to the same account (and to another) while it is compacted, against the same pushes before.
struct CompactionBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compaction",
        abstract: "Compact an account of N log entries while single-change pushes run; report both.")

    @Option(help: "Log entries of the compacted account (parameter sets over 100 ids).") var entries = 100_000
    @Option(help: "Single-change pushes timed before compaction (baseline).") var baseline = 500
    @Option(help: "sqlite, postgres (a throwaway server) or a postgres:// URL.") var backend = "sqlite"

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tipsync-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let location =
            switch backend {
            case "sqlite": "sqlite:" + directory.appendingPathComponent("server.sqlite").path
            case "postgres": try await ThrowawayPostgres.freshDatabase()
            default: backend
            }
        try await DatabaseLocation(location).withStore { store in try await measure(store) }
    }

    func measure(_ store: any SyncStore) async throws {
        let account = try await store.createAccount(name: "big")
        let other = try await store.createAccount(name: "other")
        let writer = DeviceIdentity(accountID: account, device: "writer")
        let sameAccount = DeviceIdentity(accountID: account, device: "pusher")
        let otherAccount = DeviceIdentity(accountID: other, device: "pusher")
        for identity in [writer, sameAccount, otherAccount] {
            _ = try await CredentialIssuance(store).createToken(
                accountName: identity.accountID == account ? "big" : "other", device: identity.device)
        }
        func change(_ device: String, _ seq: Int64) -> Change {
            Change(
                device: device, seq: seq, hlc: HLC(milliseconds: 1_800_000_000_000 + UInt64(seq), counter: 0),
                operation: .parameter(id: "p\(seq % 100)", value: .int(seq)))
        }
        var seq: Int64 = 0
        while seq < Int64(entries) {
            let batch = (1...1000).map { change("writer", seq + Int64($0)) }
            _ = try await store.push(batch, from: writer)
            seq += 1000
        }
        var seqs: [DeviceIdentity: Int64] = [sameAccount: 0, otherAccount: 0]
        func timedPush(_ identity: DeviceIdentity) async throws -> Duration {
            let next = seqs[identity]! + 1
            seqs[identity] = next
            let start = ContinuousClock.now
            _ = try await store.push([change(identity.device, next)], from: identity)
            return ContinuousClock.now - start
        }
        var before = Measurement()
        for index in 0..<baseline {
            before.samples.append(try await timedPush(index % 2 == 0 ? sameAccount : otherAccount))
        }
        let started = ContinuousClock.now
        let finished = Completion()
        let compaction = Task {
            defer { finished.set() }
            return try await LogCompactor(store: store).compact(account: account)
        }
        var during = Measurement()
        var index = 0
        while !finished.isSet {
            during.samples.append(try await timedPush(index % 2 == 0 ? sameAccount : otherAccount))
            index += 1
        }
        let dropped = try await compaction.value
        let took = ContinuousClock.now - started
        print(
            "backend \(backend), entries \(entries): compaction dropped \(dropped) in \(format(took.milliseconds, 1)) ms"
        )
        for (name, measurement) in [("before", before), ("during compaction", during)] {
            print(
                "single-change push \(name): n=\(measurement.samples.count) p50 \(format(measurement.percentile(0.5).milliseconds)) ms"
                    + " p99 \(format(measurement.percentile(0.99).milliseconds)) ms"
                    + " max \(format(measurement.percentile(1).milliseconds)) ms")
        }
    }

}

/// Set once, read from anywhere.
final class Completion: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
