import ArgumentParser
import Foundation
import TipSync
import TipSyncAgent
import TipSyncTestSupport

/// How soon each client syncs again after its server was down (issue 72, item 3): a
/// `tipsync-agent run` daemon, a Swift program's ``SyncClient`` and — where Node and Chromium are
/// installed — the web demo page, all live on a real `tipsync-server`; the server stops, stays down
/// for `--outage` seconds, and starts again on the same database and port. Timed from the moment
/// the restarted server answers `/health` to the moment each client's status says `connected`
/// (protocol.md §17.4), read every 20 ms. Release builds of `tipsync-server` and `tipsync-agent`
/// next to this executable.
struct RecoveryBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery",
        abstract: "Seconds until each client syncs again after the server was down for --outage seconds.")

    @Option(help: "Seconds the server stays down.") var outage = 5.0
    @Option(help: "Outages measured.") var runs = 3
    @Option(help: "The server's port (the page is served on the next one).") var port = 18_490

    func run() async throws {
        let scratch = try BenchTools.Scratch("recovery")
        defer { scratch.remove() }
        let (directory, database, token) = (scratch.directory, scratch.database, scratch.token)
        let cors = ["--cors-origins", "http://127.0.0.1:\(port + 1)"]
        var server = try await ServerProcess.start(port: port, database: database, more: cors)
        let url = "http://127.0.0.1:\(port)"

        let agent = try scratch.startAgent(server: url, catalog: false)
        defer { agent.terminate() }

        // A Swift program's sync client, in this process.
        let replica = try TipsReplica(
            directory: directory.appendingPathComponent("program"), deviceID: "program", environment: [:])
        let client = SyncClient(
            replica: replica, configuration: SyncConfiguration(server: URL(string: url)!, token: try token("program")))
        let syncing = Task { try await client.run() }
        defer { syncing.cancel() }

        // The web page, where it can run.
        var browser: HeadlessChromium?
        var pages: Process?
        defer { pages?.terminate() }
        if HeadlessChromium.executable != nil, FileManager.default.isExecutableFile(atPath: "/usr/bin/node") {
            let serve = Process()
            serve.executableURL = URL(fileURLWithPath: "/usr/bin/node")
            serve.arguments = [
                BenchTools.root.appendingPathComponent("clients/web/tools/serve.js").path, BenchTools.root.path,
                String(port + 1),
            ]
            serve.standardError = FileHandle.nullDevice
            try serve.run()
            pages = serve
            let chromium = try await HeadlessChromium()
            browser = chromium
            try await Task.sleep(for: .seconds(1))  // the page server listening
            try await chromium.open(
                "http://127.0.0.1:\(port + 1)/Examples/web/?server=\(url)&device=page&token=\(try token("page"))")
        }

        let socket = directory.appendingPathComponent("agent/agent.sock").path
        var clients: [(name: String, state: () async -> String?)] = [
            ("tipsync-agent run", { Self.agentState(socket) }),
            ("Swift program (SyncClient)", { await client.status.state.rawValue }),
        ]
        if let browser {
            clients.append(
                (
                    "web page (Chromium)",
                    { try? await browser.evaluate("globalThis.tipsync?.syncStatus.state") as? String }
                ))
        }
        // All connected before the first outage.
        _ = try await Self.untilConnected(clients, within: 30)
        var times: [[Double]] = Array(repeating: [], count: clients.count)
        for run in 1...runs {
            server.stop()
            try await Task.sleep(for: .seconds(outage))
            server = try await ServerProcess.start(port: port, database: database, more: cors)
            let back = try await Self.untilConnected(clients, within: 120)
            for (index, seconds) in back.enumerated() { times[index].append(seconds) }
            print(
                "outage \(run) of \(format(outage, 1)) s: "
                    + zip(clients, back).map { "\($0.name) \(format($1, 2)) s" }.joined(separator: ", "))
            try await Task.sleep(for: .seconds(2))  // settled before the next outage
        }
        for (index, entry) in clients.enumerated() {
            let sorted = times[index].sorted()
            print(
                "\(entry.name): back \(format(sorted.first ?? 0, 2))–\(format(sorted.last ?? 0, 2)) s after the server "
                    + "answered /health (\(runs) outages of \(format(outage, 1)) s)")
        }
        server.stop()
        await browser?.quit()
    }

    /// Seconds from now until each client says `connected` (read every 20 ms); throws after `within`.
    static func untilConnected(_ clients: [(name: String, state: () async -> String?)], within: Double)
        async throws -> [Double]
    {
        let start = ContinuousClock.now
        var found: [Double?] = Array(repeating: nil, count: clients.count)
        while found.contains(where: { $0 == nil }) {
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            guard seconds < within else {
                throw ValidationError("not all clients connected within \(within) s: \(found)")
            }
            for (index, client) in clients.enumerated() where found[index] == nil {
                if await client.state() == "connected" { found[index] = seconds }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return found.map { $0 ?? 0 }
    }

    /// The daemon's state through its local API (`sync-status`), or `nil` when it does not answer.
    static func agentState(_ socket: String) -> String? {
        guard let client = try? LocalAPIClient(path: socket), let line = try? client.request(#"{"op":"sync-status"}"#),
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let sync = object["sync"] as? [String: Any]
        else { return nil }
        return sync["state"] as? String
    }
}
