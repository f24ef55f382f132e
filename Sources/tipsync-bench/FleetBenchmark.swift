import ArgumentParser
import Foundation
import PostgresNIO
import Prometheus
import TipSyncCore
import TipSyncServer
import TipSyncTestSupport

/// Closer to real tips traffic than one busy account: A accounts × D devices, every device holding a
/// live stream that carries changes and merging what arrives (`live-receivers`, a child process),
/// each device making a change every `interval` seconds on average (issue 14's mix, one change per
/// push, pushed by a few load threads over keep-alive connections) for `seconds`. Reports the push
/// rate reached, errors, server CPU per delivered change, time from a change's stamp to its merge on
/// the account's other devices (p50/p99), and server RSS. SQLite, or PostgreSQL with `--instances`
/// server instances on one database (accounts spread over them round-robin).
struct Fleet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet", abstract: "A accounts × D live devices, a change every few seconds per device.")
    @Option var accounts = 10_000
    @Option var devicesPerAccount = 3
    @Option(help: "Average seconds between two changes of one device.") var interval = 10.0
    @Option var seconds = 60.0
    @Option(help: "sqlite, or postgres (a throwaway server).") var backend = "sqlite"
    @Option(help: "Server instances (PostgreSQL only).") var instances = 1
    @Option(help: "Load threads pushing.") var threads = 2
    @Option var port = 18_490

    func run() async throws {
        var stores: [any SyncStore] = []
        var tasks: [Task<Void, any Error>] = []
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-fleet-\(UUID())")
        let url = backend == "sqlite" ? nil : try await ThrowawayPostgres.freshDatabase()
        for index in 0..<(backend == "sqlite" ? 1 : instances) {
            let store: any SyncStore
            if let url {
                let client = try PostgresSyncStore.makeClient(url: url)
                Task { await client.run() }
                store = PostgresSyncStore(client: client)
            } else {
                store = try SQLiteSyncStore(path: directory.appendingPathComponent("server.sqlite").path)
            }
            if index == 0 { try await store.migrate() }
            var configuration = ServerConfiguration()
            configuration.requestRate = .unlimited
            configuration.changeRate = .unlimited
            configuration.autoCompactAfter = 0
            configuration.heartbeat = .seconds(30)
            configuration.httpPort = port + index
            let app = buildApplication(
                configuration: configuration,
                dependencies: ServerDependencies(store: store, registry: PrometheusCollectorRegistry()))
            tasks.append(Task { try await app.runService() })
            stores.append(store)
        }
        defer {
            for task in tasks { task.cancel() }
            try? FileManager.default.removeItem(at: directory)
        }
        for index in 0..<stores.count { try await waitForHealth(port: port + index) }

        // Accounts and tokens before anything is timed.
        var devices: [(account: Int, name: String, token: String)] = []
        for account in 0..<accounts {
            let name = "fleet-\(account)"
            _ = try await stores[0].createAccount(name: name)
            for device in 0..<devicesPerAccount {
                devices.append(
                    (account, "d\(device)", try await stores[0].createToken(accountName: name, device: "d\(device)")))
            }
        }
        let generation = try await stores[0].cursorGeneration()
        // Each device's stream goes to its account's instance.
        var receivers: [Process] = []
        for index in 0..<stores.count {
            let mine = devices.filter { $0.account % stores.count == index }
            receivers.append(
                try await LiveReceivers.spawn(
                    port: port + index, tokens: mine.map { "\($0.token) \($0.name)" }, cursor: "\(generation).0",
                    latency: true, devicesPerAccount: devicesPerAccount))
        }
        defer { for process in receivers { process.terminate() } }
        let memoryOpen = residentMemoryBytes()

        // Load: each thread pushes for its share of the devices at its share of the rate, open loop.
        let rate = Double(devices.count) / interval
        let errors = Counter()
        let pushedPer = (0..<stores.count).map { _ in Counter() }
        let shares = (0..<threads).map { thread in devices.indices.filter { $0 % threads == thread } }
        let cpuBefore = processCPUSeconds()
        let started = ContinuousClock.now
        let generatorCPU = try await withThrowingTaskGroup(of: Double.self) { group in
            for thread in 0..<threads {
                let share = shares[thread].map { devices[$0] }
                let seconds = seconds
                let port = port
                let instances = stores.count
                let pushedPer = pushedPer
                group.addTask {
                    try await onThread {
                        var connections: [HTTPConnection] = []
                        for index in 0..<instances { connections.append(try HTTPConnection(port: port + index)) }
                        var random = SplitMix64(seed: UInt64(thread) + 1)
                        var seqs = [Int](repeating: 0, count: share.count)
                        let perSecond = rate / Double(threads)
                        let begin = Date()
                        var sent = 0
                        while true {
                            let due = begin.addingTimeInterval(Double(sent) / perSecond)
                            let wait = due.timeIntervalSinceNow
                            if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
                            if Date().timeIntervalSince(begin) >= seconds { break }
                            let pick = Int(random.next() % UInt64(share.count))
                            seqs[pick] += 1
                            let device = share[pick]
                            let change = Change(
                                device: device.name, seq: Int64(seqs[pick]),
                                hlc: HLC(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000), counter: 0),
                                operation: mixedOperation(seqs[pick], device: device.name))
                            let body = Array((try? JSONCoding.encoder.encode(PushRequest(changes: [change]))) ?? Data())
                            let (status, _, _, _) = try connections[device.account % instances].exchange(
                                "POST", "/v1/push",
                                headers: ["Authorization: Bearer \(device.token)", "Content-Type: application/json"],
                                body: body)
                            if status == 200 {
                                pushedPer[device.account % instances].value.add(1, ordering: .relaxed)
                            } else {
                                errors.value.add(1, ordering: .relaxed)
                            }
                            sent += 1
                        }
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        let pushSeconds = (ContinuousClock.now - started).milliseconds / 1000
        let total = pushedPer.reduce(0) { $0 + $1.value.load(ordering: .relaxed) }
        // Tell each receiver process how many changes its accounts got, then wait until all merged.
        var reports: [String] = []
        for (index, process) in receivers.enumerated() {
            let share = pushedPer[index].value.load(ordering: .relaxed)
            try (process.standardInput as? Pipe)?.fileHandleForWriting.write(contentsOf: Data("total \(share)\n".utf8))
        }
        for process in receivers { reports.append(try await LiveReceivers.nextLine(process)) }
        let allSeconds = (ContinuousClock.now - started).milliseconds / 1000
        let serverCPU = processCPUSeconds() - cpuBefore - generatorCPU
        let delivered = total * devicesPerAccount
        print(
            "fleet backend=\(backend) instances=\(stores.count) accounts=\(accounts)×\(devicesPerAccount) interval=\(interval) s "
                + "for \(format(pushSeconds, 1)) s: \(total) pushes (\(Int(Double(total) / pushSeconds))/s of "
                + "\(Int(rate))/s asked), \(errors.value.load(ordering: .relaxed)) errors; all merged after "
                + "\(format(allSeconds, 1)) s; server CPU \(format(serverCPU, 1)) s = "
                + "\(format(serverCPU / Double(max(1, delivered)) * 1_000_000, 1)) µs per delivered change "
                + "(\(format(serverCPU / Double(max(1, total)) * 1_000_000, 0)) µs per push with its deliveries); "
                + "RSS \(memoryOpen / 1_048_576) MiB with the streams open, \(residentMemoryBytes() / 1_048_576) MiB at the end; "
                + "receivers: \(reports.joined(separator: " | "))")
    }
}
