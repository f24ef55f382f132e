import ArgumentParser
import Foundation

/// The release executables next to this one, and one-shot commands run with them — what the
/// benchmarks that start real devices share.
enum BenchTools {
    /// The executable `name` beside `tipsync-bench`.
    static func tool(_ name: String) -> URL {
        URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent(name)
    }

    /// The package's root (for `Examples/` and `clients/`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs `name ARGUMENTS` to its end; its standard output, trimmed. Throws when it fails.
    static func command(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let process = Process()
        process.executableURL = tool(name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("\(name) \(arguments) failed") }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A scratch directory with a SQLite database that holds the account `alice`, for benchmarks
    /// that start real devices; ``remove()`` deletes it.
    struct Scratch {
        let directory: URL
        let database: String

        init(_ name: String) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-\(name)-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
            _ = try BenchTools.command("tipsync-server", ["accounts", "create", "alice", "--database", database])
        }

        /// A new device token of `alice`'s `device`.
        func token(_ device: String) throws -> String {
            try BenchTools.command(
                "tipsync-server",
                ["tokens", "create", "--account", "alice", "--device", device, "--database", database])
        }

        /// A `tipsync-agent run` daemon on a new store `agent` in the directory, syncing with `server`
        /// (the example catalog loaded when `catalog`); terminate it when done.
        func startAgent(server url: String, catalog: Bool) throws -> Process {
            let store = directory.appendingPathComponent("agent").path
            _ = try BenchTools.command(
                "tipsync-agent",
                ["init", "--server", url, "--token", try token("agent"), "--device", "agent", "--store", store])
            if catalog {
                let file = BenchTools.root.appendingPathComponent("Examples/catalog.json").path
                _ = try BenchTools.command("tipsync-agent", ["catalog", "load", file, "--store", store])
            }
            let agent = Process()
            agent.executableURL = BenchTools.tool("tipsync-agent")
            agent.arguments = ["run", "--store", store]
            agent.standardError = FileHandle.nullDevice
            try agent.run()
            return agent
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
