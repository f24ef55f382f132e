import ArgumentParser
import Foundation
import TipSyncTestSupport

/// What a device costs at rest: a `tipsync-agent run` daemon and a Swift program with sync running
/// (``IdleApp``: `Tips.configure(.sync(…))` then `statusUpdates`), each holding its live
/// stream to a real `tipsync-server` while nothing changes anywhere. Read from /proc as an operating
/// system judges a process at rest: CPU time of all its threads and how often they were scheduled
/// (context switches, voluntary and not, summed over threads: every wake-up is one), and how many of
/// its sockets the server closed that it never did (`CLOSE-WAIT`). Linux only; release builds of
/// `tipsync-server` and `tipsync-agent` next to this executable.
struct IdleDevices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle-devices",
        abstract: "CPU, wake-ups and CLOSE-WAIT sockets of idle devices holding their live streams.")

    @Option(help: "Seconds measured (after the devices settle).") var seconds = 60
    @Option(help: "Seconds the devices get to start and open their streams before measuring.") var settle = 5
    @Option(help: "The server's port.") var port = 18_480

    func run() async throws {
        let scratch = try BenchTools.Scratch("idle")
        defer { scratch.remove() }
        let (directory, database, token) = (scratch.directory, scratch.database, scratch.token)
        // The page's origin (served on the next port) may call the server. Heartbeats every 30 s.
        let server = try await ServerProcess.start(
            port: port, database: database, more: ["--cors-origins", "http://127.0.0.1:\(port + 1)"])
        defer { server.stop() }
        let url = "http://127.0.0.1:\(port)"

        let agent = try scratch.startAgent(server: url, catalog: true)
        defer { agent.terminate() }

        let program = Process()
        program.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
        program.arguments = ["idle-app"]
        program.environment = ProcessInfo.processInfo.environment.merging([
            "TIPSYNC_SERVER": url, "TIPSYNC_TOKEN": try token("program"), "TIPSYNC_DEVICE": "program",
            "XDG_DATA_HOME": directory.appendingPathComponent("program").path,
        ]) { _, new in new }
        program.standardOutput = FileHandle.nullDevice
        try program.run()
        defer { program.terminate() }

        let root = BenchTools.root
        var devices = [
            ("tipsync-agent run", agent.processIdentifier), ("Swift program (idle-app)", program.processIdentifier),
        ]
        // The web demo page, where Node and Chromium are installed: its renderer process.
        var browser: HeadlessChromium?
        var pages: Process?
        defer { pages?.terminate() }
        if HeadlessChromium.executable != nil, FileManager.default.isExecutableFile(atPath: "/usr/bin/node") {
            let pagePort = port + 1
            let serve = Process()
            serve.executableURL = URL(fileURLWithPath: "/usr/bin/node")
            serve.arguments = [
                root.appendingPathComponent("clients/web/tools/serve.js").path, root.path, String(pagePort),
            ]
            serve.standardError = FileHandle.nullDevice
            try serve.run()
            pages = serve
            let before = ProcessRest.renderers()
            let chromium = try await HeadlessChromium()
            browser = chromium
            let pageToken = try token("page")
            try await Task.sleep(for: .seconds(1))  // the page server listening
            try await chromium.open(
                "http://127.0.0.1:\(pagePort)/Examples/web/?server=\(url)&device=page&token=\(pageToken)")
            if let renderer = ProcessRest.renderers().subtracting(before).first {
                devices.append(("web page (its renderer process)", renderer))
            }
        }
        try await Task.sleep(for: .seconds(settle))
        let before = devices.map { ProcessRest(pid: $0.1) }
        try await Task.sleep(for: .seconds(seconds))
        let after = devices.map { ProcessRest(pid: $0.1) }
        let closeWait = ProcessRest.closeWaitSockets(toPort: port)
        for (index, device) in devices.enumerated() {
            let cpu = (after[index].cpuSeconds - before[index].cpuSeconds) / Double(seconds) * 100
            let wakeups = Double(after[index].contextSwitches - before[index].contextSwitches) / Double(seconds)
            print(
                "\(device.0): \(format(cpu, 3)) % of a core, \(format(wakeups, 2)) wake-ups/s over \(seconds) s "
                    + "(targets: ≤ 1 %, ≤ 5/s beyond the heartbeat)")
        }
        print("sockets to the server in CLOSE-WAIT: \(closeWait) (target: 0)")
        await browser?.quit()
    }
}

/// A process's CPU time and context switches so far (Linux /proc).
struct ProcessRest {
    var cpuSeconds: Double
    var contextSwitches: Int

    init(pid: Int32) {
        cpuSeconds = 0
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) {
                cpuSeconds = (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
            }
        }
        contextSwitches = 0
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
            else { continue }
            for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
                contextSwitches +=
                    Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
            }
        }
    }

    /// The pids of Chromium renderer processes running now.
    static func renderers() -> Set<Int32> {
        var found: Set<Int32> = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry),
                let command = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                String(decoding: command, as: UTF8.self).contains("--type=renderer")
            else { continue }
            found.insert(pid)
        }
        return found
    }

    /// Client sockets connected to `port` on this machine that the server closed and the client never
    /// did (`/proc/net/tcp` state 08).
    static func closeWaitSockets(toPort port: Int) -> Int {
        let hexPort = String(format: "%04X", port)
        var count = 0
        for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let table = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 3 else { continue }
                if fields[2].hasSuffix(":" + hexPort), fields[3] == "08" { count += 1 }
            }
        }
        return count
    }
}
