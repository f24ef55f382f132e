import ArgumentParser
import Foundation
import Hummingbird
import PostgresNIO
import TipSyncCore
import TipSyncServer
import TipSyncTestSupport

/// Issue 14's PostgreSQL scale-out: N server instances on one PostgreSQL database, A accounts pushing
/// 500-change batches at once, each account through one instance (accounts spread round-robin).
/// Compare `--instances 1` with `--instances 2` on the same workload.
struct PostgresInstances: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres-instances",
        abstract: "N server instances on one PostgreSQL, A accounts pushing 500-change batches concurrently.")

    @Option(help: "Server instances, each with its own connection pool.") var instances = 2
    @Option(help: "Accounts pushing at once (one device each).") var accounts = 64
    @Option(help: "Changes per account.") var perAccount = 5000
    @Option(help: "Changes per push.") var batchSize = 500
    @Option(help: "A postgres:// URL, or 'throwaway' (initdb/pg_ctl in a temporary directory).")
    var database = "throwaway"
    @Option var port = 18_470

    func run() async throws {
        let url = database == "throwaway" ? try await ThrowawayPostgres.freshDatabase() : database
        var stores: [PostgresSyncStore] = []
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<instances {
            let client = try PostgresSyncStore.makeClient(url: url)
            Task { await client.run() }
            let store = PostgresSyncStore(client: client)
            if index == 0 { try await store.migrate() }
            var configuration = ServerConfiguration()
            configuration.requestRate = .unlimited
            configuration.changeRate = .unlimited
            configuration.autoCompactAfter = 0
            configuration.httpPort = port + index
            let app = buildApplication(configuration: configuration, dependencies: ServerDependencies(store: store))
            tasks.append(Task { try await app.runService() })
            stores.append(store)
        }
        defer { for task in tasks { task.cancel() } }
        for index in 0..<instances { try await waitForHealth(port: port + index) }
        // Accounts, tokens and bodies before timing: the figure is the servers' ingest.
        var work: [(port: Int, token: String, bodies: [[UInt8]])] = []
        var ids: [Int64] = []
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        for account in 0..<accounts {
            let name = "pg-\(account)"
            ids.append(try await stores[0].createAccount(name: name))
            let token = try await CredentialIssuance(stores[0]).createToken(accountName: name, device: "d")
            var bodies: [[UInt8]] = []
            for start in stride(from: 1, through: perAccount, by: batchSize) {
                let changes = (start..<min(start + batchSize, perAccount + 1)).map { seq in
                    Change(
                        device: "d", seq: Int64(seq), hlc: HLC(milliseconds: now, counter: UInt16(seq % 65_536)),
                        operation: .donation(
                            event: "opened-detail", id: "d:\(seq)", date: Int64(now),
                            info: .object(["yardID": .int(7)])))
                }
                bodies.append(Array(try JSONCoding.encoder.encode(PushRequest(changes: changes))))
            }
            work.append((port + account % instances, token, bodies))
        }
        let cpuBefore = processCPUSeconds()
        let machineBefore = machineCPUTicks()
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (port, token, bodies) in work {
                group.addTask {
                    try await pushOnThread(bodies, token: token, port: port)
                }
            }
            try await group.waitForAll()
        }
        let seconds = (ContinuousClock.now - started).milliseconds / 1000
        let cpu = processCPUSeconds() - cpuBefore
        let machineAfter = machineCPUTicks()
        let busy =
            Double(machineAfter.busy - machineBefore.busy) / Double(max(1, machineAfter.total - machineBefore.total))
        let total = accounts * perAccount
        for account in ids {
            let stored = try await stores[0].logCount(account: account)
            guard stored == perAccount else { throw BenchError("account \(account) holds \(stored) changes") }
        }
        print(
            "postgres-instances instances=\(instances) accounts=\(accounts) batch=\(batchSize) changes=\(total): "
                + "\(format(seconds, 2)) s, \(Int(Double(total) / seconds)) changes/s; this process (servers and "
                + "load generator) used \(format(cpu / seconds, 2)) of the \(ProcessInfo.processInfo.activeProcessorCount) "
                + "cores; the machine was \(Int(busy * 100))% busy")
    }
}

/// Waits until a server instance on `port` answers `/health` (benchmarks may poll; tests never do).
func waitForHealth(port: Int) async throws {
    for _ in 0..<500 {
        if let connection = try? HTTPConnection(port: port),
            let (status, _, _, _) = try? connection.exchange("GET", "/health", headers: [], body: []), status == 200
        {
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw BenchError("instance on port \(port) did not start")
}

/// Busy and total CPU ticks of the whole machine so far, from /proc/stat (Linux).
func machineCPUTicks() -> (busy: Int, total: Int) {
    guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
        let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
    else { return (0, 0) }
    let ticks = line.split(separator: " ").dropFirst().compactMap { Int($0) }
    let total = ticks.reduce(0, +)
    let idle = ticks.count > 4 ? ticks[3] + ticks[4] : 0  // idle + iowait
    return (total - idle, total)
}
