import Foundation

/// A `tipsync-server serve` process (the release binary next to this one) on a loopback port, for
/// benchmarks that need instances with their own open-file limit: 30,000 live streams do not fit the
/// 20,000 descriptors one process may hold here. Its CPU time and resident memory are read from
/// /proc (Linux).
struct ServerProcess {
    let process: Process
    let port: Int

    /// Starts an instance on `database` (a `postgres://` URL or `sqlite:PATH`) with no per-device
    /// rate limits and no background compaction (a benchmark's log stays as pushed), and waits until
    /// it answers `/health`.
    static func start(port: Int, database: String, more: [String] = []) async throws -> ServerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("tipsync-server")
        process.arguments =
            [
                "serve", "--http-port", String(port), "--database", database, "--rate-requests", "0",
                "--rate-changes", "0", "--auto-compact-after", "0", "--heartbeat", "30", "--log-level",
                ProcessInfo.processInfo.environment["TIPSYNC_BENCH_SERVER_LOG_LEVEL"] ?? "error",
            ] + more
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try await waitForHealth(port: port)
        return ServerProcess(process: process, port: port)
    }

    /// User and system CPU time the process used so far, in seconds (`/proc/PID/stat`).
    var cpuSeconds: Double { Self.cpuSeconds(pid: process.processIdentifier) }

    /// User and system CPU time process `pid` used so far, in seconds.
    static func cpuSeconds(pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident memory of the process, in bytes (`VmRSS` of `/proc/PID/status`).
    var residentBytes: Int { Self.residentBytes(pid: process.processIdentifier) }

    /// Resident memory of process `pid`, in bytes.
    static func residentBytes(pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
