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
/// peak RSS meanwhile against its RSS with every stream open. Release builds of `tipsync-server`
/// next to this executable.
struct ClientStorm: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client-storm",
        abstract: "Seconds until A×D reference sync clients are live again after their server was killed.")
    @Option var accounts = 6_000
    @Option var devicesPerAccount = 3
    @Option(help: "Clients per `sync-clients` child (each child has its own open-file limit).")
    var clientsPerProcess = 2_000
    @Option var runs = 1
    @Option(help: "Seconds to wait for every client to be live before giving up.") var within = 600.0
    @Option var port = 18_495

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
        var server = try await ServerProcess.start(port: port, database: "sqlite:\(database)")
        defer { server.stop() }
        let url = "http://127.0.0.1:\(port)"
        var children: [Process] = []
        defer { for child in children { child.terminate() } }
        let started = ContinuousClock.now
        for start in stride(from: 0, to: lines.count, by: clientsPerProcess) {
            let share = Array(lines[start..<min(start + clientsPerProcess, lines.count)])
            children.append(
                try await SyncClients.spawn(
                    server: url, tokens: share, directory: directory.appendingPathComponent("clients-\(start)")))
        }
        var counts = try await Self.allLive(children, within: within)
        let first = (ContinuousClock.now - started).milliseconds / 1000
        let steady = server.residentBytes
        print(
            "\(lines.count) clients in \(children.count) processes live after \(format(first, 1)) s "
                + "(\(Self.perDevice(counts, lines.count))); server RSS \(steady / 1_048_576) MiB")
        for run in 1...runs {
            try await Task.sleep(for: .seconds(2))  // settled
            kill(server.process.processIdentifier, SIGKILL)
            server.process.waitUntilExit()
            let begin = ContinuousClock.now
            server = try await ServerProcess.start(port: port, database: "sqlite:\(database)")
            let serving = (ContinuousClock.now - begin).milliseconds / 1000
            let pid = server.process.processIdentifier
            let sampler = Task {
                var peak = 0
                while !Task.isCancelled {
                    peak = max(peak, ServerProcess.residentBytes(pid: pid))
                    try? await Task.sleep(for: .milliseconds(100))
                }
                return peak
            }
            let after = try await Self.allLive(children, within: within)
            let live = (ContinuousClock.now - begin).milliseconds / 1000
            sampler.cancel()
            let peak = await sampler.value
            let during = zip(after, counts).map { $0 - $1 }
            counts = after
            print(
                "storm \(run): killed and started again, /health after \(format(serving, 2)) s; every client "
                    + "connected after \(format(live, 2)) s; requests meanwhile \(Self.perDevice(during, lines.count)); "
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

    static func perDevice(_ counts: [Int], _ devices: Int) -> String {
        zip(["push", "pull", "live", "other"], counts).map { name, count in
            "\(name) \(count) (\(format(Double(count) / Double(max(1, devices)), 2))/device)"
        }.joined(separator: ", ")
    }
}
