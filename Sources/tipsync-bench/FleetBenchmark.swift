import ArgumentParser
import Foundation
import Hummingbird
import PostgresNIO
import Prometheus
import Synchronization
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

    @Flag(
        help:
            "Run each server instance as a `tipsync-server` process (next to this executable): each has its own open-file limit, so 10,000 × 3 streams fit; CPU and RSS are read from /proc."
    ) var serverProcesses = false
    @Option(help: "Streams per `live-receivers` child (each child has its own open-file limit).")
    var streamsPerReceiver = 12_000
    @Flag(
        help:
            "A reconnect storm (needs --server-processes): once every stream is open, stop every server process (SIGTERM) and start it again on its port; the devices reconnect as protocol.md §17.3 says. Reports when every device holds a stream again, the servers' CPU and peak RSS meanwhile; the changes pushed after it must then reach every device."
    ) var restart = false
    @Option(
        help:
            "With --restart: how many of the server processes to restart (the first N; default all). One of several is a deploy's rolling restart or one crashed instance: only its devices reconnect."
    ) var restartInstances: Int?
    @Flag(
        help:
            "With --restart: the receivers write a line a second to standard error while any of their streams is not open (live, waiting, connecting, asked; why attempts failed)."
    ) var timeline = false

    func run() async throws {
        var stores: [any SyncStore] = []
        var tasks: [Task<Void, any Error>] = []
        var processes: [ServerProcess] = []
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-fleet-\(UUID())")
        let url = backend == "sqlite" ? nil : try await ThrowawayPostgres.freshDatabase()
        let instances = backend == "sqlite" ? 1 : self.instances
        defer {
            for task in tasks { task.cancel() }
            for process in processes { process.stop() }
            try? FileManager.default.removeItem(at: directory)
        }
        let sqlitePath = directory.appendingPathComponent("server.sqlite").path
        for index in 0..<(serverProcesses ? 1 : instances) {
            let store: any SyncStore
            if let url {
                let client = try PostgresSyncStore.makeClient(url: url)
                Task { await client.run() }
                store = PostgresSyncStore(client: client)
            } else {
                store = try SQLiteSyncStore(path: sqlitePath)
            }
            if index == 0 { try await store.migrate() }
            stores.append(store)
            guard !serverProcesses else { break }
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
        }
        if serverProcesses {
            for index in 0..<instances {
                processes.append(
                    try await ServerProcess.start(port: port + index, database: url ?? "sqlite:\(sqlitePath)"))
            }
        }
        for index in 0..<instances { try await waitForHealth(port: port + index) }

        // Accounts and tokens before anything is timed.
        var devices: [(account: Int, name: String, token: String)] = []
        for account in 0..<accounts {
            let name = "fleet-\(account)"
            _ = try await stores[0].createAccount(name: name)
            for device in 0..<devicesPerAccount {
                devices.append(
                    (
                        account, "d\(device)",
                        try await CredentialIssuance(stores[0]).createToken(accountName: name, device: "d\(device)")
                    ))
            }
        }
        let generation = try await stores[0].cursorGeneration()
        // Each device's stream goes to its account's instance; an instance's accounts are split over
        // receiver children of at most `streamsPerReceiver` streams, whole accounts each.
        let accountsPerReceiver = max(1, streamsPerReceiver / devicesPerAccount)
        var groups: [(instance: Int, accounts: [Int])] = []
        for index in 0..<instances {
            let mine = Array(stride(from: index, to: accounts, by: instances))
            for start in stride(from: 0, to: mine.count, by: accountsPerReceiver) {
                groups.append((index, Array(mine[start..<min(start + accountsPerReceiver, mine.count)])))
            }
        }
        var groupOf = [Int](repeating: 0, count: accounts)
        for (group, members) in groups.enumerated() { for account in members.accounts { groupOf[account] = group } }
        var receivers: [Process] = []
        for (group, members) in groups.enumerated() {
            let mine = devices.filter { groupOf[$0.account] == group }
            receivers.append(
                try await LiveReceivers.spawn(
                    port: port + members.instance, tokens: mine.map { "\($0.token) \($0.name)" },
                    cursor: "\(generation).0", latency: true, devicesPerAccount: devicesPerAccount, reconnect: restart,
                    timeline: timeline))
        }
        defer { for process in receivers { process.terminate() } }
        var storm = ""
        if restart {
            guard serverProcesses else { throw BenchError("--restart needs --server-processes") }
            let restarted = min(restartInstances ?? processes.count, processes.count)
            guard restarted > 0 else { throw BenchError("--restart-instances must be at least 1") }
            let cpuOfOthers = processes[restarted...].reduce(0) { $0 + $1.cpuSeconds }
            let begin = ContinuousClock.now
            for process in processes[..<restarted] { process.process.terminate() }
            for process in processes[..<restarted] { process.process.waitUntilExit() }
            let stopped = (ContinuousClock.now - begin).milliseconds / 1000
            for index in 0..<restarted {
                processes[index] = try await ServerProcess.start(
                    port: processes[index].port, database: url ?? "sqlite:\(sqlitePath)")
            }
            let serving = (ContinuousClock.now - begin).milliseconds / 1000
            let pids = processes.map(\.process.processIdentifier)
            let sampler = Task {
                var peak = 0
                while !Task.isCancelled {
                    peak = max(peak, pids.reduce(0) { $0 + ServerProcess.residentBytes(pid: $1) })
                    try? await Task.sleep(for: .milliseconds(100))
                }
                return peak
            }
            var attempts = 0
            var causes: [String: Int] = [:]
            // Only the devices of a restarted instance lost their streams and report reconnecting:
            // `held N reconnects R causes cause=count,…`.
            for (group, process) in receivers.enumerated() where groups[group].instance < restarted {
                let words = try await LiveReceivers.nextLine(process).split(separator: " ")
                if let at = words.firstIndex(of: "reconnects"), at + 1 < words.count {
                    attempts += Int(words[at + 1]) ?? 0
                }
                if let at = words.firstIndex(of: "causes"), at + 1 < words.count {
                    for pair in words[at + 1].split(separator: ",") {
                        let parts = pair.split(separator: "=")
                        if parts.count == 2 { causes[String(parts[0]), default: 0] += Int(parts[1]) ?? 0 }
                    }
                }
            }
            let live = (ContinuousClock.now - begin).milliseconds / 1000
            sampler.cancel()
            let peak = await sampler.value
            let cpu = processes.reduce(0) { $0 + $1.cpuSeconds } - cpuOfOthers
            let which = restarted == processes.count ? "" : " \(restarted) of \(processes.count) instances"
            storm =
                "restart\(which): stopped after \(format(stopped, 2)) s, serving again after \(format(serving, 2)) s, "
                + "every device live again after \(format(live, 2)) s (\(attempts) stream requests; ended or failed: "
                + causes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                + "); the servers' "
                + "CPU meanwhile \(format(cpu, 2)) s (the new ones' and the others' growth), peak RSS of all \(peak / 1_048_576) MiB; "
        }
        /// The servers' CPU time: this process's, or the server processes'.
        let serverCPUSeconds = { processes.isEmpty ? processCPUSeconds() : processes.reduce(0) { $0 + $1.cpuSeconds } }
        let serverMemory = { processes.isEmpty ? residentMemoryBytes() : processes.reduce(0) { $0 + $1.residentBytes } }
        let memoryOpen = serverMemory()

        // Load: each thread pushes for its share of the devices at its share of the rate, open loop.
        let rate = Double(devices.count) / interval
        let errors = Counter()
        let pushedPer = groups.map { _ in Counter() }
        let shares = (0..<threads).map { thread in devices.indices.filter { $0 % threads == thread } }
        let cpuBefore = serverCPUSeconds()
        let started = ContinuousClock.now
        let generatorCPU = try await withThrowingTaskGroup(of: Double.self) { group in
            for thread in 0..<threads {
                let share = shares[thread].map { devices[$0] }
                let seconds = seconds
                let port = port
                let pushedPer = pushedPer
                let groupOf = groupOf
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
                                pushedPer[groupOf[device.account]].value.add(1, ordering: .relaxed)
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
        let serverCPU = serverCPUSeconds() - cpuBefore - (processes.isEmpty ? generatorCPU : 0)
        let delivered = total * devicesPerAccount
        print(
            storm
                + "fleet backend=\(backend) instances=\(instances)\(processes.isEmpty ? "" : " (processes)") accounts=\(accounts)×\(devicesPerAccount) interval=\(interval) s "
                + "for \(format(pushSeconds, 1)) s: \(total) pushes (\(Int(Double(total) / pushSeconds))/s of "
                + "\(Int(rate))/s asked), \(errors.value.load(ordering: .relaxed)) errors; all merged after "
                + "\(format(allSeconds, 1)) s; server CPU \(format(serverCPU, 1)) s = "
                + "\(format(serverCPU / Double(max(1, delivered)) * 1_000_000, 1)) µs per delivered change "
                + "(\(format(serverCPU / Double(max(1, total)) * 1_000_000, 0)) µs per push with its deliveries); "
                + "RSS \(memoryOpen / 1_048_576) MiB with the streams open, \(serverMemory() / 1_048_576) MiB at the end; "
                + "receivers: \(reports.joined(separator: " | "))")
    }
}
