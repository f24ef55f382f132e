import Foundation
import Hummingbird
import PostgresNIO
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

    static func start(port: Int, backend: String = "sqlite") async throws -> BenchServer {
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
        configuration.heartbeatSeconds = 30
        // Benchmarks measure the server's capacity, not its per-device limits.
        configuration.requestRate = .unlimited
        configuration.changeRate = .unlimited
        // Nor background compaction: a benchmark's log stays as pushed.
        configuration.autoCompactAfter = 0
        let app = buildApplication(
            address: .hostname("127.0.0.1", port: port), store: store, configuration: configuration)
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

    /// Creates an account with `devices` devices; returns their tokens by device name.
    func account(_ name: String, devices: [String]) async throws -> [String: String] {
        _ = try await store.createAccount(name: name)
        var tokens: [String: String] = [:]
        for device in devices { tokens[device] = try await store.createToken(accountName: name, device: device) }
        return tokens
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Resident memory of this process, from /proc (Linux).
func residentMemoryBytes(_ field: String = "VmRSS") -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
    else { return 0 }
    return (Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "0") ?? 0) * 1024
}

/// Of the resident memory: anonymous (heap, stacks: what a leak grows) and file-backed (code and
/// data of the executable and its libraries, paged in as code runs for the first time).
func residentBreakdown() -> String {
    "anonymous \(residentMemoryBytes("RssAnon") / 1_048_576) MiB, files \(residentMemoryBytes("RssFile") / 1_048_576) MiB"
}
