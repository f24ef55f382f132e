import Foundation
import Testing
import TipSync
import TipSyncTestSupport

/// The real `tipsync-server` executable, as an operator runs it.
@Suite struct ServerProcessTests {
    /// The built products directory (where the test bundle and `tipsync-server` live).
    static var productsDirectory: URL {
        let path = ProcessInfo.processInfo.arguments[0]
        var url = URL(fileURLWithPath: path).deletingLastPathComponent()
        if url.lastPathComponent == "MacOS" {
            url = url.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        }
        return url
    }

    static func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await offPool { try runBlocking(arguments) }
    }

    private static func runBlocking(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent("tipsync-server")
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        return (
            process.terminationStatus,
            String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        )
    }

    @Test func operatorCommandsAndTwoDevicesSyncingThroughTheRealServer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tipsync-process-\(UUID().uuidString)")
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        let account = try await Self.run(["accounts", "create", "alice", "--database", database])
        #expect(account.status == 0)
        // One name for an account everywhere (issue 12, defect 8): `create` printed a numeric id
        // that `tokens create --account` refused, and `compact --account` wanted that id.
        #expect(account.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "alice")
        let compacted = try await Self.run(["compact", "--account", "alice", "--database", database])
        #expect(compacted.status == 0 && compacted.stdout.contains("dropped 0"), "\(compacted)")
        let unknown = try await Self.run(["compact", "--account", "nobody", "--database", database])
        #expect(unknown.status != 0 && unknown.stderr.contains("no account named 'nobody'"), "\(unknown)")
        let phoneToken = try await Self.run([
            "tokens", "create", "--account", "alice", "--device", "phone", "--database", database,
        ])
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let laptopToken = try await Self.run([
            "tokens", "create", "--account", "alice", "--device", "laptop", "--database", database,
        ])
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(phoneToken.hasPrefix("ts_") && laptopToken.hasPrefix("ts_") && phoneToken != laptopToken)
        let missing = try await Self.run([
            "tokens", "create", "--account", "nobody", "--device", "x", "--database", database,
        ])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no account named 'nobody'"))

        // Serve on a free port; the environment sets it, as deployments do.
        let port = FreePort.next()
        let server = Process()
        server.executableURL = Self.productsDirectory.appendingPathComponent("tipsync-server")
        server.arguments = ["serve"]
        server.environment = ProcessInfo.processInfo.environment.merging(
            ["HTTP_PORT": String(port), "TIPSYNC_DATABASE": database]) { $1 }
        let serverErr = Pipe()
        server.standardError = serverErr
        try server.run()
        defer { if server.isRunning { server.terminate() } }

        let url = URL(string: "http://127.0.0.1:\(port)")!
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        let phoneClient = SyncClient(replica: phone, configuration: SyncConfiguration(server: url, token: phoneToken))
        let laptopClient = SyncClient(
            replica: laptop, configuration: SyncConfiguration(server: url, token: laptopToken))
        try phone.invalidate(tip: "favorite", reason: .tipClosed)
        let ready = await Self.waitForLine(containing: "listening", in: serverErr.fileHandleForReading)
        #expect(ready)
        try await phoneClient.syncOnce()
        try await laptopClient.syncOnce()
        #expect(laptop.status(of: TipDefinition(id: "favorite", title: "F")) == .invalidated(.tipClosed))

        // SIGTERM: a graceful stop, exit status 0.
        server.terminate()
        await server.exit()
        #expect(server.terminationStatus == 0)
    }

    /// Reads the server's log until a line contains `text` (its "listening" line): no sleeping.
    static func waitForLine(containing text: String, in handle: FileHandle) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {  // a blocking read: never on the dispatch pool the test tasks share
                var seen = ""
                while true {
                    let data = handle.availableData
                    if data.isEmpty { return continuation.resume(returning: false) }
                    seen += String(decoding: data, as: UTF8.self)
                    if seen.contains(text) { return continuation.resume(returning: true) }
                }
            }
        }
    }
}
