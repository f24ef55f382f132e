import Foundation
import Hummingbird
import PostgresNIO
import Prometheus
import TipSync
import TipSyncServer
import TipSyncTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An in-process `tipsync-server` on a loopback port with a fresh database, for benchmarks: SQLite,
/// or PostgreSQL (`postgres`: a throwaway server started with initdb/pg_ctl, or a `postgres://` URL).
struct BenchServer {
    let store: any SyncStore
    let port: Int
    let directory: URL
    let task: Task<Void, any Error>

    /// `memoryReleaseInterval`: ``ServerConfiguration/memoryReleaseInterval`` in seconds (the server's default
    /// unless given).
    static func start(port: Int, backend: String = "sqlite", memoryReleaseInterval: Double? = nil) async throws
        -> BenchServer
    {
        // As `tipsync-server serve` runs (one benchmark per process starts one server).
        EventLoopCount.apply()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tipsync-bench-\(UUID().uuidString)")
        let store: any SyncStore
        if backend == "sqlite" {
            store = try SQLiteSyncStore(path: directory.appendingPathComponent("server.sqlite").path)
        } else {
            let url = backend.hasPrefix("postgres://") ? backend : try await ThrowawayPostgres.freshDatabase()
            let client = try PostgresSyncStore.makeClient(url: url)
            Task { await client.run() }  // lives as long as the benchmark process
            store = PostgresSyncStore(client: client)
        }
        try await store.migrate()
        var configuration = ServerConfiguration()
        configuration.heartbeat = .seconds(30)
        // Benchmarks measure the server's capacity, not its per-device limits.
        configuration.requestRate = .unlimited
        configuration.changeRate = .unlimited
        // Nor background compaction: a benchmark's log stays as pushed.
        configuration.autoCompactAfter = 0
        if let memoryReleaseInterval { configuration.memoryReleaseInterval = .seconds(memoryReleaseInterval) }
        configuration.httpPort = port
        let app = buildApplication(
            configuration: configuration,
            dependencies: ServerDependencies(store: store, registry: PrometheusCollectorRegistry()))
        let task = Task { try await app.runService() }
        let server = BenchServer(store: store, port: port, directory: directory, task: task)
        // A benchmark may poll for readiness (tests never do).
        for _ in 0..<500 {
            if (try? await URLSession.shared.data(from: server.url.appendingPathComponent("health"))) != nil {
                return server
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError("server did not start on port \(port)")
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func stop() {
        task.cancel()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A request to the server with a device's bearer token.
    func request(_ path: String, token: String) -> URLRequest {
        var request = URLRequest(url: url.appendingPathComponent(path))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
    }

    /// `tipsync_memory_releases_total` from `/metrics` (not counted as traffic by the server).
    func memoryReleases() async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: url.appendingPathComponent("metrics"))
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first {
            $0.hasPrefix("tipsync_memory_releases_total ")
        }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// Waits until the server has released memory more than `count` times (at most 5 minutes);
    /// returns the new count.
    func waitForMemoryRelease(after count: Int) async throws -> Int {
        for _ in 0..<600 {
            let now = try await memoryReleases()
            if now > count { return now }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw BenchError("the server released no memory within 5 minutes")
    }

    /// Creates an account with `devices` devices; returns their tokens by device name.
    func account(_ name: String, devices: [String]) async throws -> [String: String] {
        _ = try await store.createAccount(name: name)
        var tokens: [String: String] = [:]
        for device in devices {
            tokens[device] = try await CredentialIssuance(store).createToken(accountName: name, device: device)
        }
        return tokens
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Resident memory of this process, from /proc (Linux).
func residentMemoryBytes(_ field: String = "VmRSS") -> Int {
    SystemAllocator.residentBytes(field)
}

/// Of the resident memory: anonymous (heap, stacks: what a leak grows) and file-backed (code and
/// data of the executable and its libraries, paged in as code runs for the first time), and of the
/// anonymous memory, the live heap (what `malloc` handed out and was not freed: what a leak grows)
/// and what the allocator holds from the system.
func residentBreakdown() -> String {
    func mib(_ bytes: Int) -> String { format(Double(bytes) / 1_048_576, 1) }
    let heap = SystemAllocator.heapStatistics().map { "; live heap \(mib($0.inUse)) MiB of \(mib($0.held)) MiB held" }
    return "anonymous \(mib(residentMemoryBytes("RssAnon"))) MiB, files \(mib(residentMemoryBytes("RssFile"))) MiB"
        + (heap ?? "")
}
