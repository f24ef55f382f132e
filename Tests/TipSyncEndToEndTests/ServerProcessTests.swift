import Foundation
import Testing
import TipSync
import TipSyncServerTestSupport
import TipSyncTestSupport

/// The real `tipsync-server` executable, as an operator runs it.
@Suite struct ServerProcessTests {
    /// A command run from another directory used to open a new, empty database at the default
    /// relative path and answer "no account named 'dana'" (issue 31, item 7). Only `serve`,
    /// `migrate`, `accounts create` and `admin-keys create` may create one; every command says which
    /// database it opened.
    @Test func commandsNameTheirDatabaseAndOnlyCreatingOnesCreateIt() async throws {
        let directory = Scratch.path("tipsync-cwd")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tool = ServerProcess.productsDirectory.appendingPathComponent("tipsync-server").path
        func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
            try await ChildProcess.run(
                tool, arguments, directory: directory.path)
        }
        let expected = directory.standardizedFileURL.appendingPathComponent("tipsync-data/server.sqlite").path
        for arguments in [
            ["accounts", "show", "dana"], ["tokens", "create", "--account", "dana", "--device", "phone"],
            ["accounts", "list"], ["compact", "--account", "dana"], ["rotate-cursors"],
        ] {
            let refused = try await run(arguments)
            #expect(refused.status != 0, "\(arguments)")
            #expect(refused.stderr.contains("no database at sqlite:\(expected)"), "\(arguments): \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: expected), "nothing was created")
        let created = try await run(["accounts", "create", "dana"])
        #expect(created.status == 0)
        #expect(created.stderr.contains("database sqlite:\(expected) (new)"))
        let shown = try await run(["accounts", "show", "dana"])
        #expect(shown.status == 0 && shown.stdout.contains("\"dana\""))
        #expect(shown.stderr.contains("database sqlite:\(expected)") && !shown.stderr.contains("(new)"))
    }

    /// After 18,000 devices' first launch glibc's `malloc` kept twice the memory of a restart with
    /// the same streams, its free pages pinned by the streams' objects among them (issue 77, item
    /// 8). The server links mimalloc on Linux (Package.swift) and says on `/metrics` which allocator
    /// answers: a build or an install that lost it shows here, not in a benchmark months later.
    @Test func theServerRunsOnMimallocAndSaysSo() async throws {
        let directory = Scratch.path("tipsync-allocator")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = try await ServerUnderTest.start(
            database: "sqlite:" + directory.appendingPathComponent("server.sqlite").path)
        defer { server.process.terminate() }
        let (status, body) = try await RawConnection.exchange(port: server.port, method: "GET", path: "/metrics")
        #expect(status == 200)
        let line = String(decoding: body, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("tipsync_allocator_info{") }
        #if os(Linux)
            let mimalloc = /tipsync_allocator_info\{allocator="mimalloc \d+\.\d+\.\d+"\} 1(\.0)?/
            #expect(line?.wholeMatch(of: mimalloc) != nil, "\(line ?? "none")")
        #else
            #expect(line != nil)
        #endif
    }

    @Test func operatorCommandsAndTwoDevicesSyncingThroughTheRealServer() async throws {
        let directory = Scratch.path("tipsync-process")
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        let account = try await ServerProcess.run(["accounts", "create", "alice", "--database", database])
        #expect(account.status == 0)
        // One name for an account everywhere (issue 12, defect 8): `create` printed a numeric id
        // that `tokens create --account` refused, and `compact --account` wanted that id.
        #expect(account.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "alice")
        let compacted = try await ServerProcess.run(["compact", "--account", "alice", "--database", database])
        #expect(compacted.status == 0 && compacted.stdout.contains("dropped 0"), "\(compacted)")
        let unknown = try await ServerProcess.run(["compact", "--account", "nobody", "--database", database])
        #expect(unknown.status != 0 && unknown.stderr.contains("no account named 'nobody'"), "\(unknown)")
        let phoneToken = try await ServerProcess.run([
            "tokens", "create", "--account", "alice", "--device", "phone", "--database", database,
        ])
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let laptopToken = try await ServerProcess.run([
            "tokens", "create", "--account", "alice", "--device", "laptop", "--database", database,
        ])
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(phoneToken.hasPrefix("ts_") && laptopToken.hasPrefix("ts_") && phoneToken != laptopToken)
        let missing = try await ServerProcess.run([
            "tokens", "create", "--account", "nobody", "--device", "x", "--database", database,
        ])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no account named 'nobody'"))

        // Serve on a free port; the environment sets it, as deployments do.
        let port = FreePort.next()
        let server = try ChildProcess(
            ServerProcess.productsDirectory.appendingPathComponent("tipsync-server").path, ["serve"],
            environment: ["HTTP_PORT": String(port), "TIPSYNC_DATABASE": database])
        defer { server.terminate() }

        let url = URL(string: "http://127.0.0.1:\(port)")!
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        let phoneClient = SyncClient(replica: phone, configuration: SyncConfiguration(server: url, token: phoneToken))
        let laptopClient = SyncClient(
            replica: laptop, configuration: SyncConfiguration(server: url, token: laptopToken))
        try phone.invalidate(tip: "favorite", reason: .tipClosed)
        let ready = await server.stderr.waitFor("listening")
        #expect(ready)
        try await phoneClient.syncOnce()
        try await laptopClient.syncOnce()
        #expect(laptop.status(of: TipDefinition(id: "favorite", title: "F")) == .invalidated(.tipClosed))

        // SIGTERM: a graceful stop, exit status 0.
        server.terminate()
        #expect(await server.exitStatus() == 0)
    }
}
