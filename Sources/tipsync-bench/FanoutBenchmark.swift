import ArgumentParser
import Foundation
import Synchronization
import TipSyncCore
import TipSyncServer

/// Issue 14's fan-out: D devices each push N single-change pushes, while each long-polls; the clock
/// stops when every device has pulled all D×N changes. Reports changes per second (D×N over that
/// time) and the server's CPU time per push. Each device uses two keep-alive connections (one to
/// push, one to pull), on threads of their own.
struct Fanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout", abstract: "D devices push N single changes each until every device holds all D×N.")

    @Option(help: "Devices.") var devices = 8
    @Option(help: "Single-change pushes per device.") var pushes = 5000
    @Option var port = 18_460

    func run() async throws {
        let server = try await BenchServer.start(port: port)
        defer { server.stop() }
        let names = (0..<devices).map { "d\($0)" }
        let tokens = try await server.account("fanout", devices: names)
        let total = devices * pushes
        let pulls = Counter()
        let cpuBefore = processCPUSeconds()
        let started = ContinuousClock.now
        let generatorCPU = try await withThrowingTaskGroup(of: Double.self) { group in
            for name in names {
                let token = tokens[name]!
                group.addTask {
                    try await onThread {
                        let connection = try HTTPConnection(port: port)
                        for seq in 1...pushes {
                            let change = Change(
                                device: name, seq: Int64(seq),
                                hlc: HLC(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000), counter: 0),
                                operation: .donation(event: "e", id: "\(name):\(seq)", date: Int64(seq), info: nil))
                            let body = try JSONCoding.encoder.encode(PushRequest(changes: [change]))
                            let (status, _, _, _) = try connection.exchange(
                                "POST", "/v1/push",
                                headers: ["Authorization: Bearer \(token)", "Content-Type: application/json"],
                                body: Array(body))
                            guard status == 200 else { throw BenchError("push answered \(status)") }
                        }
                    }
                }
                group.addTask {
                    try await onThread {
                        let connection = try HTTPConnection(port: port)
                        var cursor: String?
                        var received = 0
                        while received < total {
                            let path = "/v1/pull?limit=5000&wait=30" + (cursor.map { "&cursor=\($0)" } ?? "")
                            let (status, _, _, body) = try connection.exchange(
                                "GET", path, headers: ["Authorization: Bearer \(token)"], body: [])
                            guard status == 200 else { throw BenchError("pull answered \(status)") }
                            let page = try JSONCoding.decode(PullResponse.self, from: body)
                            received += page.changes.count
                            pulls.value.add(1, ordering: .relaxed)
                            cursor = page.cursor
                        }
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        let seconds = (ContinuousClock.now - started).milliseconds / 1000
        let cpu = processCPUSeconds() - cpuBefore
        let serverCPU = cpu - generatorCPU
        print(
            "fanout devices=\(devices) pushes=\(pushes): every device holds all \(total) changes after "
                + "\(format(seconds, 2)) s = \(Int(Double(total) / seconds)) changes/s; "
                + "process CPU \(format(cpu, 1)) s, of which the server \(format(serverCPU, 1)) s = "
                + "\(format(serverCPU / Double(total) * 1_000_000, 0)) µs per push (its pulls included); "
                + "\(pulls.value.load(ordering: .relaxed)) pulls, "
                + "\(format(Double(total * devices) / Double(max(1, pulls.value.load(ordering: .relaxed))), 1)) changes per pull"
        )
    }
}

/// Runs blocking work on a thread of its own; returns the CPU time that thread used, in seconds, so
/// a benchmark can subtract its load generator from the process's CPU time.
@discardableResult
func onThread(_ body: @escaping @Sendable () throws -> Void) async throws -> Double {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Double, any Error>) in
        Thread.detachNewThread {
            // Named, so a profile tells the load generator's threads from the server's.
            Thread.current.name = "bench-client"
            let before = cpuSeconds(rusageThread)
            continuation.resume(with: Result { try body() }.map { cpuSeconds(rusageThread) - before })
        }
    }
}

/// Pushes `bodies` one after the other over one keep-alive connection, on a thread of its own;
/// returns that thread's CPU time. Any answer but 200 fails the benchmark.
@discardableResult
func pushOnThread(_ bodies: [[UInt8]], token: String, port: Int) async throws -> Double {
    try await onThread {
        let connection = try HTTPConnection(port: port)
        for body in bodies {
            let (status, _, _, _) = try connection.exchange(
                "POST", "/v1/push", headers: ["Authorization: Bearer \(token)", "Content-Type: application/json"],
                body: body)
            guard status == 200 else { throw BenchError("push answered \(status)") }
        }
    }
}

/// User and system CPU time of this process so far, in seconds.
func processCPUSeconds() -> Double { cpuSeconds(RUSAGE_SELF.rawValue) }

/// User and system CPU time so far, in seconds, of the process (`RUSAGE_SELF`) or the calling thread
/// (`RUSAGE_THREAD`, Linux).
func cpuSeconds(_ who: Int32) -> Double {
    var usage = rusage()
    getrusage(who, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

/// A count shared by threads.
final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

/// Linux's `RUSAGE_THREAD`, which Glibc's module does not export (it needs `_GNU_SOURCE`).
let rusageThread: Int32 = 1
