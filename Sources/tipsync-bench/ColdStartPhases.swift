import ArgumentParser
import Foundation
import TipSync
import TipSyncCore

/// The cold start's client-side phases, each timed alone on one thread (no server, no overlap):
/// decoding the pages, merging them into an in-memory state, and merging
/// them into a new persisted replica — what `cold-pull` pipelines. Profiles one phase at a time.
struct ColdStartPhases: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cold-phases")
    @Option var changes = 100_000
    @Option var pullLimit = 5000
    @Option(help: "Repeat each phase this many times and report each run.") var runs = 3
    @Option(help: "Stop after this phase (decode, merge), to profile the phases before it alone.") var through: String?

    func run() async throws {
        let all = coldPullChanges(changes)
        // The bytes `GET /v1/pull` sends: the stored canonical JSON of each change, joined.
        let pages = stride(from: 0, to: all.count, by: pullLimit).map { start -> Data in
            let slice = all[start..<min(start + pullLimit, all.count)]
            let text =
                #"{"changes":["# + slice.map(\.canonicalJSON).joined(separator: ",")
                + #"],"cursor":"c\#(start)","generation":"g","highestSeq":0,"more":\#(start + pullLimit < all.count),"serverTime":0,"snapshot":false}"#
            return Data(text.utf8)
        }
        let clock = ContinuousClock()
        for _ in 0..<runs {
            var started = clock.now
            let decoded = try pages.map { try JSONCoding.decode(PullResponse.self, from: $0) }
            let decode = clock.now - started
            if through == "decode" {
                print(
                    "cold-phases changes=\(changes) pullLimit=\(pullLimit): decode \(format(decode.milliseconds, 1)) ms"
                )
                continue
            }
            started = clock.now
            markProfileWindow("merge")
            var state = ReplicaState()
            for page in decoded { _ = state.apply(page.changes) }
            let merge = clock.now - started
            markProfileWindow("merged")
            if through == "merge" {
                print(
                    "cold-phases changes=\(changes) pullLimit=\(pullLimit): merge into memory \(format(merge.milliseconds, 1)) ms"
                )
                continue
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "tipsync-bench-phases-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let replica = try TipsReplica(directory: directory, deviceID: "reader")
            started = clock.now
            let cpu = processCPUSeconds()
            markProfileWindow("persist")
            for page in decoded {
                try replica.applyRemote(page.changes) { $0.pullCursor = page.cursor }
            }
            let persisted = clock.now - started
            markProfileWindow("persisted")
            let persistedCPU = processCPUSeconds() - cpu
            guard state == replica.state else { throw BenchError("the persisted replica differs from the merge") }
            func ms(_ duration: Duration) -> String { format(duration.milliseconds, 1) + " ms" }
            print(
                "cold-phases changes=\(changes) pullLimit=\(pullLimit): decode \(ms(decode)), "
                    + "merge into memory \(ms(merge)), merge into a new persisted replica \(ms(persisted)) "
                    + "(CPU \(format(persistedCPU * 1000, 1)) ms)")
        }
    }
}

/// Issue 14's cold-start log: 90% donations over 20 events with a small payload, 10% parameter sets
/// over 50 parameters, all from one device, stamped `now`.
func coldPullChanges(_ count: Int, now: UInt64 = UInt64(Date().timeIntervalSince1970 * 1000)) -> [Change] {
    (1...count).map { seq -> Change in
        let operation: Change.Operation =
            seq % 10 == 0
            ? .parameter(id: "p\(seq % 50)", value: .int(Int64(seq)))
            : .donation(
                event: "e\(seq % 20)", id: "writer:\(seq)", date: Int64(now),
                info: .object(["yardID": .int(Int64(seq % 9))]))
        return Change(
            device: "writer", seq: Int64(seq), hlc: HLC(milliseconds: now, counter: UInt16(seq % 65_536)),
            operation: operation)
    }
}
