import Foundation
import Synchronization
import TipSyncAgent
import TipSyncTestSupport

/// The built products directory (where the test bundle, `tipsync-agent` and `tipsync-server` live).
let productsDirectory: URL = {
    var url = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
    if url.lastPathComponent == "MacOS" {
        url = url.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
    return url
}()

/// The package's root (for the README and Examples/).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A fresh temporary directory (short path: Unix socket paths are limited to ~100 bytes).
func scratchDirectory() -> URL {
    let url = URL(fileURLWithPath: "/tmp/tsa-\(UUID().uuidString.prefix(8))")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs one of the package's executables to completion (on a thread of its own: see `offPool`).
@discardableResult
func runTool(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) async throws
    -> CommandResult
{
    try await offPool { try runToolBlocking(tool, arguments, environment: environment) }
}

private func runToolBlocking(_ tool: String, _ arguments: [String], environment: [String: String]) throws
    -> CommandResult
{
    let process = Process()
    process.executableURL = productsDirectory.appendingPathComponent(tool)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes before waiting, so a chatty process never blocks on a full pipe.
    let stdout = Drain(out.fileHandleForReading)
    let stderr = Drain(err.fileHandleForReading)
    process.waitUntilExit()
    return CommandResult(status: process.terminationStatus, stdout: stdout.finish(), stderr: stderr.finish())
}

/// Reads a pipe to its end on a background thread.
final class Drain: Sendable {
    let text = Mutex("")
    let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            done.signal()
        }
    }

    func finish() -> String {
        done.wait()
        return text.withLock { $0 }
    }
}

/// A long-running process (a server, a daemon) whose stderr is read continuously, so tests can wait
/// for a log line (readiness) instead of sleeping.
final class Background: Sendable {
    let process: Process
    let log = Mutex("")
    let waiters = Mutex<[(String, CheckedContinuation<Bool, Never>)]>([])
    let ended = Mutex(false)
    let stdout: Drain

    init(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent(tool)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let err = Pipe()
        let out = Pipe()
        process.standardError = err
        process.standardOutput = out
        try process.run()
        self.process = process
        stdout = Drain(out.fileHandleForReading)
        let handle = err.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                let text = log.withLock { log in
                    log += String(decoding: data, as: UTF8.self)
                    return log
                }
                let ready = waiters.withLock { waiters in
                    let ready = waiters.filter { text.contains($0.0) }
                    waiters.removeAll { text.contains($0.0) }
                    return ready
                }
                for (_, continuation) in ready { continuation.resume(returning: true) }
            }
            ended.withLock { $0 = true }
            for (_, continuation) in waiters.withLock({ w in
                defer { w = [] }
                return w
            }) {
                continuation.resume(returning: false)
            }
        }
    }

    /// Waits until stderr contains `text`; `false` if the process closed stderr (exited) first.
    func waitForLog(_ text: String) async -> Bool {
        await withCheckedContinuation { continuation in
            let resolved: Bool? = log.withLock { log in
                if log.contains(text) { return true }
                if ended.withLock({ $0 }) { return false }
                waiters.withLock { $0.append((text, continuation)) }
                return nil
            }
            if let resolved { continuation.resume(returning: resolved) }
        }
    }

    /// SIGTERM, then the exit status.
    @discardableResult
    func stop() async -> Int32 {
        if process.isRunning { process.terminate() }
        await process.exit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// A real `tipsync-server` on a SQLite file, with an account and per-device tokens.
final class TestServer: Sendable {
    let database: String
    let port: Int
    let process: Mutex<Background?>

    /// A server on a new SQLite file in `directory`, with the account `team`.
    convenience init(directory: URL) async throws {
        try await self.init(database: "sqlite:" + directory.appendingPathComponent("server.sqlite").path)
    }

    /// A server on `database` (`sqlite:PATH` or `postgres://…`); `createAccount: false` for a second
    /// instance on a database another instance already set up.
    init(database: String, createAccount: Bool = true) async throws {
        self.database = database
        port = FreePort.next()
        process = Mutex(nil)
        guard createAccount else { return }
        let created = try await runTool("tipsync-server", ["accounts", "create", "team", "--database", database])
        guard created.status == 0 else { throw TestFailure("accounts create: \(created.stderr)") }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    func token(device: String) async throws -> String {
        let result = try await runTool(
            "tipsync-server", ["tokens", "create", "--account", "team", "--device", device, "--database", database])
        guard result.status == 0 else { throw TestFailure("tokens create: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts serving and waits for the "listening" log line.
    func start() async throws {
        let server = try Background(
            "tipsync-server", ["serve", "--http-port", String(port), "--database", database])
        process.withLock { $0 = server }
        guard await server.waitForLog("listening") else {
            throw TestFailure("server did not start: \(server.log.withLock { $0 })")
        }
    }

    func stop() async {
        await process.withLock { $0 }?.stop()
    }

    /// SIGTERM without waiting (for `defer`, which cannot wait).
    func terminate() {
        if let server = process.withLock({ $0 }), server.process.isRunning { server.process.terminate() }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One device's agent (its store in `directory/name`), driven through the real CLI.
struct TestAgent {
    let name: String
    let store: String
    var clockOffset: Double?

    init(_ name: String, in directory: URL, server: TestServer, clockOffset: Double? = nil) async throws {
        self.name = name
        store = directory.appendingPathComponent(name).path
        self.clockOffset = clockOffset
        let token = try await server.token(device: name)
        try await check(["init", "--server", server.url, "--token", token, "--device", name])
        try await check(["catalog", "load", packageRoot.appendingPathComponent("Examples/catalog.json").path])
    }

    var globalArguments: [String] {
        ["--store", store] + (clockOffset.map { ["--clock-offset", String($0)] } ?? [])
    }

    /// Runs `tipsync-agent ARGS --store …`.
    @discardableResult
    func run(_ arguments: [String]) async throws -> CommandResult {
        try await runTool("tipsync-agent", arguments + globalArguments)
    }

    /// Runs and requires exit status 0; returns stdout.
    @discardableResult
    func check(_ arguments: [String]) async throws -> String {
        let result = try await run(arguments)
        guard result.status == 0 else {
            throw TestFailure("tipsync-agent \(arguments.joined(separator: " ")) → \(result.status): \(result.stderr)")
        }
        return result.stdout
    }

    /// `status TIP --json`, decoded.
    func status(_ tip: String) async throws -> (status: String, reason: String?, displayCount: Int) {
        let json = try await check(["status", tip, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        let first = (object["tips"] as! [[String: Any]])[0]
        return (first["status"] as! String, first["reason"] as? String, first["displayCount"] as! Int)
    }

    /// Starts `run` and waits until its local API listens.
    func startDaemon() async throws -> Background {
        let daemon = try Background("tipsync-agent", ["run"] + globalArguments)
        guard await daemon.waitForLog("local API listening") else {
            throw TestFailure("agent \(name) did not start: \(daemon.log.withLock { $0 })")
        }
        return daemon
    }

    var socketPath: String { store + "/agent.sock" }
}

extension LocalAPIClient {
    /// The next line from the agent's local API, read on a thread of its own (the read blocks).
    func nextLine() async throws -> String? {
        try await offPool(using: self) { try $0.readLine() }
    }

    /// One request and its answer, on a thread of its own.
    func ask(_ json: String) async throws -> String {
        try await offPool(using: self) { try $0.request(json) }
    }
}
