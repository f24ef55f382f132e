import ArgumentParser
import Foundation
import TipSyncCore
import TipSyncServer
import TipSyncTestSupport

/// A reconnect storm of reference clients (issue 77, item 5): A accounts × D devices, each the
/// library's ``SyncClient`` on its own replica (`sync-clients` children), live on one
/// `tipsync-server` process; once every client says `connected`, the server is killed (`SIGKILL`)
/// and started again at once on the same database and port. Reports when every client says
/// `connected` again, the requests the clients made meanwhile (per device), and the server's CPU and
/// peak RSS meanwhile against its RSS with every stream open. Each child connects to a loopback
/// address of its own, as devices come from addresses of their own. Release builds of
/// `tipsync-server` next to this executable.
struct ClientStorm: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client-storm",
        abstract: "Seconds until A×D reference sync clients are live again after their server was killed.")
    @Option var accounts = 6_000
    @Option var devicesPerAccount = 3
    @Option(help: "Clients per `sync-clients` child (each child has its own open-file limit).")
    var clientsPerProcess = 2_000
    @Option(help: "Storms after the first launch (0: only the first launch, and the rest if asked).") var runs = 1
    @Option(help: "Seconds to wait for every client to be live before giving up.") var within = 600.0
    @Option var port = 18_495
    @Option(
        help:
            "Seconds to wait after the first launch before the storms, reporting the server's RSS, descriptors and where its streams are served (async-http-client closes a connection idle for 60 s)."
    ) var rest = 0.0
    @Flag(
        help:
            "Every child connects to 127.0.0.1 (before 2026-12-07): one host's 18,000 connections to one address and port make the kernel search its ephemeral ports at each connect."
    ) var oneAddress = false

    func run() async throws {
        let directory = URL(fileURLWithPath: "/dev/shm", isDirectory: true).appendingPathComponent(
            "tipsync-client-storm-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("server.sqlite").path
        var lines: [String] = []
        do {
            let store = try SQLiteSyncStore(path: database)
            try await store.migrate()
            for account in 0..<accounts {
                let name = "storm-\(account)"
                _ = try await store.createAccount(name: name)
                for device in 0..<devicesPerAccount {
                    let token = try await CredentialIssuance(store).createToken(accountName: name, device: "d\(device)")
                    lines.append("\(token) \(name)-d\(device)")
                }
            }
        }
        // Devices come from addresses of their own. Child k connects to loopback address 127.0.0.(k+1)
        // (the server listening on all of them): the clients' kernel then picks each connection's
        // port among a child's own 2,000, not among all 18,000 to one address and port.
        let listen = oneAddress ? [] : ["--http-host", "0.0.0.0"]
        var server = try await ServerProcess.start(port: port, database: "sqlite:\(database)", more: listen)
        defer { server.stop() }
        var children: [Process] = []
        defer { for child in children { child.terminate() } }
        let started = ContinuousClock.now
        for start in stride(from: 0, to: lines.count, by: clientsPerProcess) {
            let share = Array(lines[start..<min(start + clientsPerProcess, lines.count)])
            let host = oneAddress ? 1 : 1 + children.count % 254
            children.append(
                try await SyncClients.spawn(
                    server: "http://127.0.0.\(host):\(port)", tokens: share,
                    directory: directory.appendingPathComponent("clients-\(start)")))
        }
        var counts = try await Self.allLive(children, within: within)
        let first = (ContinuousClock.now - started).milliseconds / 1000
        let steady = server.residentBytes
        Self.say(
            "\(lines.count) clients in \(children.count) processes live after \(format(first, 1)) s "
                + "(\(Self.perDevice(counts, lines.count))); server RSS \(steady / 1_048_576) MiB")
        if rest > 0 {
            try await Task.sleep(for: .seconds(rest))
            Self.say(
                "after \(format(rest, 0)) s at rest: server RSS \(server.residentBytes / 1_048_576) MiB, "
                    + "\(Self.descriptors(pid: server.process.processIdentifier)) descriptors; streams opened: "
                    + Self.metricLines(port: port, prefix: "tipsync_live_streams_opened_total").joined(separator: ", "))
        }
        for run in stride(from: 1, through: runs, by: 1) {
            try await Task.sleep(for: .seconds(2))  // settled
            let clientsCPU = { children.reduce(0) { $0 + ServerProcess.cpuSeconds(pid: $1.processIdentifier) } }
            let clientsBefore = clientsCPU()
            kill(server.process.processIdentifier, SIGKILL)
            server.process.waitUntilExit()
            let begin = ContinuousClock.now
            server = try await ServerProcess.start(port: port, database: "sqlite:\(database)", more: listen)
            let serving = (ContinuousClock.now - begin).milliseconds / 1000
            let pid = server.process.processIdentifier
            let devices = lines.count
            let port = port
            // The server's side: its peak RSS, and when its own count of open streams first reached
            // every device (`tipsync_live_connections`), read every 100 ms.
            let sampler = Task {
                var peak = 0
                var served: Double?
                while !Task.isCancelled {
                    peak = max(peak, ServerProcess.residentBytes(pid: pid))
                    if served == nil, let open = Self.openStreams(port: port), open >= devices {
                        served = (ContinuousClock.now - begin).milliseconds / 1000
                    }
                    try? await Task.sleep(for: .milliseconds(100))
                }
                return (peak, served)
            }
            let after = try await Self.allLive(children, within: within)
            let live = (ContinuousClock.now - begin).milliseconds / 1000
            sampler.cancel()
            let (peak, served) = await sampler.value
            let during = zip(after, counts).map { $0 - $1 }
            counts = after
            // The stream requests that reached the restarted server (the clients' count includes
            // those refused while it was down).
            let opened = Self.metricSum(port: port, prefix: "tipsync_live_streams_opened_total")
            let refused = Self.metricSum(port: port, prefix: "tipsync_requests_refused_total")
            Self.say(
                "storm \(run): killed and started again, /health after \(format(serving, 2)) s; the server held "
                    + "every stream after \(served.map { format($0, 2) + " s" } ?? "(not seen)"); every client "
                    + "said connected after \(format(live, 2)) s; requests meanwhile \(Self.perDevice(during, lines.count)); "
                    + "streams the new server opened \(Int(opened)) (\(format(opened / Double(devices), 2))/device), refused \(Int(refused)); "
                    + "the clients' CPU \(format(clientsCPU() - clientsBefore, 2)) s; "
                    + "server CPU \(format(server.cpuSeconds, 2)) s, peak RSS \(peak / 1_048_576) MiB, "
                    + "then \(server.residentBytes / 1_048_576) MiB (steady before: \(steady / 1_048_576) MiB)")
        }
    }

    /// Waits for every child's next `live N requests push=… pull=… live=… other=…` line; returns the
    /// request counts summed over the children (push, pull, live, other).
    static func allLive(_ children: [Process], within: Double) async throws -> [Int] {
        try await withThrowingTaskGroup(of: [Int].self) { group in
            group.addTask {
                try await Task.sleep(for: .seconds(within))
                throw BenchError("not every client was live within \(within) s")
            }
            group.addTask {
                var sum = [0, 0, 0, 0]
                for child in children {
                    let line = try await LiveReceivers.nextLine(child)
                    guard line.hasPrefix("live") else { throw BenchError("a sync-clients child said: \(line)") }
                    let values = line.split(separator: " ").compactMap { word in
                        word.split(separator: "=").last.flatMap { Int($0) }
                    }.suffix(4)
                    for (index, value) in values.enumerated() { sum[index] += value }
                }
                return sum
            }
            let sum = try await group.next() ?? []
            group.cancelAll()
            return sum
        }
    }

    /// The server's `/metrics` lines that start with `prefix` (none when it does not answer).
    static func metricLines(port: Int, prefix: String) -> [String] {
        guard let connection = try? HTTPConnection(port: port),
            let (status, _, _, body) = try? connection.exchange("GET", "/metrics", headers: [], body: []),
            status == 200
        else { return [] }
        return String(decoding: body, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix(prefix) }.map(
            String.init)
    }

    /// The sum of the server's `/metrics` values named `prefix` (0 when it does not answer).
    static func metricSum(port: Int, prefix: String) -> Double {
        metricLines(port: port, prefix: prefix).compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            .reduce(0, +)
    }

    /// The server's `tipsync_live_connections`, or `nil` when it does not answer.
    static func openStreams(port: Int) -> Int? {
        metricLines(port: port, prefix: "tipsync_live_connections ").first.flatMap { $0.split(separator: " ").last }
            .flatMap { Double($0) }.map { Int($0) }
    }

    /// How many descriptors process `pid` holds.
    static func descriptors(pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// A line of the report, written at once (the report is often read from a file while it runs).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func perDevice(_ counts: [Int], _ devices: Int) -> String {
        zip(["push", "pull", "live", "other"], counts).map { name, count in
            "\(name) \(count) (\(format(Double(count) / Double(max(1, devices)), 2))/device)"
        }.joined(separator: ", ")
    }
}
