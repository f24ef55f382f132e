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
}
