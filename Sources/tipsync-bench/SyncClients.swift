import ArgumentParser
import AsyncHTTPClient
import Foundation
import Synchronization
import TipSync

/// Child process of `client-storm`: N reference devices — each a ``TipsReplica`` in its own
/// directory and the library's ``SyncClient`` running over ``HTTPClientTransport``, exactly as an
/// app configures sync — a pair of HTTP clients for each hundred of them. Prints `live N requests
/// push=P pull=Q live=L other=O` each time every client's status says `connected` (protocol.md
/// §17.4: the stream said `ready`), after at least one was not: the counts are every request the
/// clients made so far.
struct SyncClients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync-clients", shouldDisplay: false)
    @Option var server: String
    @Option(help: "File with one `token device` per line.") var tokens: String
    @Option(help: "Where each device's replica is kept (a directory per device).") var directory: String

    /// Replicas per pair of HTTP clients (HTTPClientTransport's documentation: a hundred or so).
    static let replicasPerClient = 100

    /// Requests the clients made, by route.
    final class Requests: Sendable {
        static let routes = ["push", "pull", "live"]
        /// Per route of ``routes``, then every other request.
        private let counts = Mutex([Int](repeating: 0, count: routes.count + 1))

        func count(_ path: String) {
            let index = Self.routes.firstIndex { path.hasPrefix("/v1/\($0)") } ?? Self.routes.count
            counts.withLock { $0[index] += 1 }
        }

        var summary: String {
            zip(Self.routes + ["other"], counts.withLock { $0 }).map { "\($0)=\($1)" }.joined(separator: " ")
        }
    }

    /// Each client's latest status, and whether every client is `connected` again since one was not.
    /// Every status passes through ``set(_:_:)`` under the lock, so a dip is never missed (a stream of
    /// counts buffering only the newest missed every one while the clients kept the process busy,
    /// and the storm waited forever).
    final class Connected: Sendable {
        private struct State {
            var statuses: [SyncStatus?]
            var count = 0
            /// Whether a client was not connected since the last report.
            var dipped = true
        }
        private let state: Mutex<State>

        init(devices: Int) {
            state = Mutex(State(statuses: [SyncStatus?](repeating: nil, count: devices)))
        }

        /// Records device `index`'s status; `true` when this makes every client connected again.
        func set(_ index: Int, _ status: SyncStatus) -> Bool {
            state.withLock { state in
                let was = state.statuses[index]?.state == .connected
                let now = status.state == .connected
                state.statuses[index] = status
                if was != now { state.count += now ? 1 : -1 }
                if state.count < state.statuses.count {
                    state.dipped = true
                    return false
                }
                defer { state.dipped = false }
                return state.dipped
            }
        }

        /// What the clients that are not connected say, when some are not: how many in each state,
        /// and one error of each code.
        var waitingFor: String? {
            state.withLock { state in
                guard state.count < state.statuses.count else { return nil }
                var states: [String: Int] = [:]
                var errors: [String: String] = [:]
                for status in state.statuses where status?.state != .connected {
                    states[status.map { $0.state.rawValue } ?? "no status", default: 0] += 1
                    if let error = status?.lastError { errors[error.code] = "\(error)" }
                }
                return "\(state.count) of \(state.statuses.count) connected; the others: "
                    + states.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                    + (errors.isEmpty ? "" : "; " + errors.values.sorted().joined(separator: "; "))
            }
        }
    }

    /// The library's transport, counting what goes through it.
    struct CountingTransport: SyncTransport {
        let base: HTTPClientTransport
        let requests: Requests

        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            requests.count(request.path)
            return try await base.send(request)
        }

        func stream(_ request: SyncHTTPRequest) async throws -> SyncHTTPStream? {
            requests.count(request.path)
            return try await base.stream(request)
        }
    }

    func run() async throws {
        let devices = try String(contentsOfFile: tokens, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: " ").map(String.init)
        }
        guard let url = URL(string: server) else { throw ValidationError("--server: not a URL") }
        // Clients as HTTPClientTransport's documentation says a process syncing many replicas makes
        // them: one for requests and one for streams per hundred replicas. (One pair for 2,000: the
        // pool copied its list of 2,000 connections as each connection opened, 8.7% of a child's
        // CPU in a storm.)
        var configuration = HTTPClientTransport.sharedClientConfiguration
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit =
            2 * Self.replicasPerClient + 16
        let pairs =
            (0..<(devices.count + Self.replicasPerClient - 1) / Self.replicasPerClient)
            .map { _ in
                (
                    HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration),
                    HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
                )
            }
        let requests = Requests()
        // Whether each device is connected, and how many are.
        let connected = Connected(devices: devices.count)
        var clients: [SyncClient] = []
        for (index, device) in devices.enumerated() {
            let (http, streams) = pairs[index / Self.replicasPerClient]
            let replica = try TipsReplica(
                directory: URL(fileURLWithPath: directory).appendingPathComponent(device[1]), deviceID: device[1],
                environment: [:])
            clients.append(
                SyncClient(
                    replica: replica, configuration: SyncConfiguration(server: url, token: device[0]),
                    transport: CountingTransport(
                        base: HTTPClientTransport(baseURL: url, client: http, streamClient: streams), requests: requests
                    )))
        }
        try await withThrowingDiscardingTaskGroup { group in
            for (index, client) in clients.enumerated() {
                group.addTask { try await client.run() }
                group.addTask {
                    for await status in await client.statusUpdates() where connected.set(index, status) {
                        FileHandle.standardOutput.write(
                            Data("live \(devices.count) requests \(requests.summary)\n".utf8))
                    }
                }
            }
            // A storm that takes long says why on stderr, every 10 s.
            group.addTask {
                while true {
                    try await Task.sleep(for: .seconds(10))
                    if let waiting = connected.waitingFor {
                        FileHandle.standardError.write(Data("sync-clients: \(waiting)\n".utf8))
                    }
                }
            }
        }
    }

    /// Starts a child with `lines` (`token device`) and waits for its first `live` line.
    static func spawn(server: String, tokens lines: [String], directory: URL) async throws -> Process {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("tokens")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["sync-clients", "--server", server, "--tokens", file.path, "--directory", directory.path]
        process.standardOutput = Pipe()
        try process.run()
        return process
    }
}
