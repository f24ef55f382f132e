import Foundation
import Hummingbird
import HummingbirdTesting
import Prometheus
import Testing
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// What an operator expects of a server's output (issue 53, item 5): process figures and a way to
/// keep `/metrics` private, an access log, a JSON log format, a line at SIGTERM, help for every
/// command. Each was missing before.
@Suite struct OperatorOutputTests {
    @Test func metricsCarryTheProcessFiguresAndTheMetricsTokenGuardsThem() async throws {
        var configuration = ServerConfiguration.test
        configuration.metricsToken = "scrape-me-0123456789"
        let app = buildApplication(
            configuration: configuration,
            dependencies: ServerDependencies(
                store: try await ServerFixture.make().store, registry: PrometheusCollectorRegistry()))
        try await app.test(.router) { client in
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(String(buffer: response.body).contains(#""code":"unauthorized""#))
            }
            try await client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer scrape-me-012345678X"]
            ) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer scrape-me-0123456789"]
            ) { response in
                #expect(response.status == .ok)
                let text = String(buffer: response.body)
                for name in [
                    "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
                    "process_start_time_seconds",
                ] {
                    #expect(text.contains("# HELP \(name) "), "\(name)")
                }
                let resident = text.split(separator: "\n").first { $0.hasPrefix("process_resident_memory_bytes ") }
                #expect((resident?.split(separator: " ").last.flatMap { Double($0) } ?? 0) > 1_000_000)
            }
            // /health stays open.
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
        }
    }

    /// proc(5)'s stat line, whose command name may hold spaces and parentheses.
    @Test func processFiguresAreReadFromProcStat() throws {
        let stat =
            "4242 (tipsync (a) b) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 12000 123456789 2560 "
            + "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
        let usage = try #require(
            ProcessUsage.parse(
                stat: stat, systemStat: "cpu  1 2 3\nbtime 1800000000\nprocesses 9\n", ticksPerSecond: 100,
                pageSize: 4096))
        #expect(usage.cpuSeconds == 3)
        #expect(usage.startTime == 1_800_000_120)
        #expect(usage.virtualBytes == 123_456_789)
        #expect(usage.residentBytes == 2560 * 4096)
        #expect(ProcessUsage.parse(stat: "garbage", systemStat: "", ticksPerSecond: 100, pageSize: 4096) == nil)
    }

    /// `--log-format json --log-access 1`: every line on stderr is one JSON object; each request is a
    /// record at info; SIGTERM is announced, and so is the stop.
    @Test(.timeLimit(.minutes(2))) func jsonLogsAnAccessLogAndTheShutdownLines() async throws {
        let database = "sqlite:" + Scratch.path("tipsync-log").appendingPathComponent("server.sqlite").path
        #expect(try await ServerProcess.run(["accounts", "create", "alice", "--database", database]).status == 0)
        let token = try await ServerProcess.run([
            "tokens", "create", "--account", "alice", "--device", "phone", "--database", database,
        ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try await ServerUnderTest.start(
            database: database, arguments: ["--log-format", "json", "--log-access", "1"])
        let (status, _) = try await RawConnection.exchange(port: server.port, method: "GET", path: "/health")
        #expect(status == 200)
        // Two single pushes on a kept-alive connection, the second with a cached token: both are logged.
        let connection = try RawConnection(port: server.port)  // kept alive, as devices push
        for seq in 1...2 {
            connection.send(
                PushOnKeptAliveConnectionTests.push(
                    PushOnKeptAliveConnectionTests.changes(PushOnKeptAliveConnectionTests.change(Int64(seq))),
                    token: token))
            #expect(await connection.readResponses(1, within: 30).map(\.status) == [200])
        }
        let (refused, _) = try await RawConnection.exchange(
            port: server.port, method: "GET", path: "/v1/pull?cursor=abc&access_token=secret")
        #expect(refused == 401)
        server.process.signal(SIGTERM)
        await server.process.exitStatus()
        let lines = server.process.stderr.text.split(separator: "\n")
        var records: [[String: Any]] = []
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not a JSON record: \(line)")
            if let object { records.append(object) }
        }
        func metadata(_ record: [String: Any]) -> [String: String] { record["metadata"] as? [String: String] ?? [:] }
        let requests = records.filter { $0["message"] as? String == "request" }
        #expect(requests.allSatisfy { $0["level"] as? String == "info" })
        #expect(requests.contains { metadata($0)["path"] == "/health" && metadata($0)["status"] == "200" })
        #expect(requests.filter { metadata($0)["path"] == "/v1/push" && metadata($0)["status"] == "200" }.count == 2)
        #expect(
            requests.contains {
                metadata($0)["path"] == "/v1/pull?cursor=abc&access_token=<redacted>" && metadata($0)["status"] == "401"
            })
        #expect(!server.process.stderr.text.contains("secret"))
        #expect(records.contains { ($0["message"] as? String)?.hasPrefix("database sqlite:") == true })
        let messages = records.compactMap { $0["message"] as? String }
        #expect(messages.contains { $0.hasPrefix("SIGTERM received: shutting down") }, "\(messages)")
        #expect(messages.last == "stopped")
    }

    /// `tipsync-server help` and `help COMMAND` describe every command and subcommand (`tokens` had
    /// no description).
    @Test func everyCommandHasADescription() async throws {
        func undescribed(_ path: [String]) async throws -> [String] {
            let help = try await ServerProcess.run(["help"] + path)
            guard let section = help.stdout.components(separatedBy: "SUBCOMMANDS:").dropFirst().first else {
                return []
            }
            var missing: [String] = []
            for line in section.split(separator: "\n") {
                guard line.hasPrefix("  "), !line.hasPrefix("   "), !line.contains("See '") else { continue }
                let words = line.split(separator: " ", omittingEmptySubsequences: true)
                guard let name = words.first.map(String.init) else { continue }
                if words.count == 1 { missing.append((path + [name]).joined(separator: " ")) }
                missing += try await undescribed(path + [name])
            }
            return missing
        }
        #expect(try await undescribed([]) == [])
    }
}
