import Foundation
import Synchronization
import TipSyncAgent
import TipSyncTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

/// A fresh directory (short path: Unix socket paths are limited to ~100 bytes), removed with the
/// test process's ``Scratch`` root when the process exits.
func scratchDirectory() -> URL {
    Scratch.directory("tsa")
}

struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// An agent on a new store for device `phone`, with `Examples/catalog.json`, whose server is not
/// there (`127.0.0.1:1`): what in-process agent tests start from.
func exampleAgent(firstSyncTimeout: Double? = nil) throws -> Agent {
    let store = AgentStore(directory: scratchDirectory().appendingPathComponent("store"))
    try store.initialize(
        AgentConfiguration(
            server: URL(string: "http://127.0.0.1:1")!, token: "ts_unused", device: "phone",
            firstSyncTimeout: firstSyncTimeout))
    let agent = try Agent(store: store)
    _ = try agent.loadCatalog(from: packageRoot.appendingPathComponent("Examples/catalog.json"))
    return agent
}

/// Runs one of the package's executables to completion.
@discardableResult
func runTool(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) async throws
    -> CommandResult
{
    let result = try await ChildProcess.run(
        productsDirectory.appendingPathComponent(tool).path, arguments, environment: environment)
    return CommandResult(status: result.status, stdout: result.stdout, stderr: result.stderr)
}

/// A long-running process (a server, a daemon) whose stderr is read continuously, so tests can wait
/// for a log line (readiness) instead of sleeping.
final class Background: Sendable {
    let process: ChildProcess

    init(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = try ChildProcess(
            productsDirectory.appendingPathComponent(tool).path, arguments, environment: environment)
    }

    /// Any program, by path (`node`).
    init(executable: String, _ arguments: [String]) throws {
        process = try ChildProcess(executable, arguments)
    }

    /// Everything the process wrote to stderr so far.
    var log: String { process.stderr.text }

    /// Waits until stderr contains `text`; `false` if the process closed stderr (exited) first.
    func waitForLog(_ text: String) async -> Bool {
        await process.stderr.waitFor(text)
    }

    /// SIGTERM, then the exit status.
    @discardableResult
    func stop() async -> Int32 {
        process.terminate()
        return await process.exitStatus()
    }

    deinit {
        process.terminate()
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
    /// `port`: another server's, to stand in for it at the same address (a restart on another database).
    init(database: String, createAccount: Bool = true, port: Int? = nil) async throws {
        self.database = database
        self.port = port ?? FreePort.next()
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

    /// A new admin key (`tipsync-server admin-keys create`).
    func adminKey() async throws -> String {
        let result = try await runTool("tipsync-server", ["admin-keys", "create", "--database", database])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `PUT /admin/v1/catalog` with `text`; the HTTP status.
    func putCatalog(_ text: String, key: String) async throws -> Int {
        var request = URLRequest(url: URL(string: url + "/admin/v1/catalog")!)
        request.httpMethod = "PUT"
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        request.httpBody = Data(text.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// `POST /admin/v1/catalog/versions/VERSION/restore`; the HTTP status.
    func restoreCatalog(_ version: Int, key: String) async throws -> Int {
        var request = URLRequest(url: URL(string: url + "/admin/v1/catalog/versions/\(version)/restore")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// Starts serving (with more `serve` flags, if given) and waits for the "listening" log line.
    func start(_ flags: [String] = []) async throws {
        let server = try Background(
            "tipsync-server", ["serve", "--http-port", String(port), "--database", database] + flags)
        process.withLock { $0 = server }
        guard await server.waitForLog("listening") else {
            throw TestFailure("server did not start: \(server.log)")
        }
    }

    func stop() async {
        await process.withLock { $0 }?.stop()
    }

    /// SIGTERM without waiting (for `defer`, which cannot wait).
    func terminate() {
        process.withLock({ $0 })?.process.terminate()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One device's agent (its store in `directory/name`), driven through the real CLI; it syncs with
/// `server`, or through `serverURL` (a ``SlowLink`` to it).
struct TestAgent {
    let name: String
    let store: String
    var clockOffset: Double?

    init(
        _ name: String, in directory: URL, server: TestServer, serverURL: String? = nil, clockOffset: Double? = nil,
        initOptions: [String] = []
    ) async throws {
        self.name = name
        store = directory.appendingPathComponent(name).path
        self.clockOffset = clockOffset
        let token = try await server.token(device: name)
        try await check(
            ["init", "--server", serverURL ?? server.url, "--token", token, "--device", name] + initOptions)
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
            throw TestFailure("agent \(name) did not start: \(daemon.log)")
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
