import ArgumentParser
import Foundation
import NIOCore
import Synchronization
import TipSync
import TipSyncAgent
import TipSyncServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Push ingest over HTTP: N devices push 500-change batches concurrently (target ≥ 50,000 changes/s).
struct PushIngest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "push-ingest")
    @Option var port = 18_080
    @Option(help: "Concurrent devices.") var devices = 1
    @Option(help: "Changes per push.") var batchSize = 500
    @Option(help: "Total changes.") var total = 200_000
    @Option(help: "sqlite, postgres (a throwaway server) or a postgres:// URL.") var backend = "sqlite"
    @Flag(
        help:
            "Call the store's push directly (each device a task, changes already decoded): the storage's share of a push, without HTTP, authentication or JSON."
    )
    var storeOnly = false

    func run() async throws {
        let server = try await BenchServer.start(port: port, backend: backend)
        defer { server.stop() }
        let names = (0..<devices).map { "device-\($0)" }
        if storeOnly { return try await pushToStore(server, names: names) }
        let tokens = try await server.account("bench", devices: names)
        let perDevice = total / devices
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        // Bodies are encoded before timing: the figure is the server's ingest.
        var bodies: [String: [Data]] = [:]
        var bytes = 0
        for name in names {
            var list: [Data] = []
            for changes in batches(of: name, count: perDevice, now: now) {
                let body = try JSONCoding.encoder.encode(PushRequest(changes: changes))
                bytes += body.count
                list.append(body)
            }
            bodies[name] = list
        }
        // Each device pushes over one keep-alive connection on a thread of its own, so the threads'
        // CPU time can be subtracted from the process's: what is left is the server's.
        let cpuBefore = processCPUSeconds()
        let clock = ContinuousClock()
        let start = clock.now
        let generatorCPU = try await withThrowingTaskGroup(of: Double.self) { group in
            for name in names {
                let token = tokens[name]!
                let batches = bodies[name]!.map { Array($0) }
                let port = port
                group.addTask {
                    try await pushOnThread(batches, token: token, port: port)
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = clock.now - start
        let serverCPU = processCPUSeconds() - cpuBefore - generatorCPU
        let stored = try await server.store.logCount(account: 1)
        guard stored == perDevice * devices else {
            throw BenchError("stored \(stored), expected \(perDevice * devices)")
        }
        let seconds = elapsed.milliseconds / 1000
        let pushes = bodies.values.reduce(0) { $0 + $1.count }
        print(
            "push-ingest backend=\(backend == "sqlite" ? "sqlite" : "postgres") devices=\(devices) batch=\(batchSize) changes=\(stored): \(format(seconds, 2)) s, "
                + "\(Int(Double(stored) / seconds)) changes/s; \(bytes / stored) bytes/change pushed; server CPU "
                + "\(format(serverCPU / Double(pushes) * 1_000_000, 0)) µs per push, "
                + "\(format(serverCPU / Double(stored) * 1_000_000, 1)) µs per change")
    }
}

extension PushIngest {
    /// Device `name`'s first `count` changes, one donation each, in pushes of `batchSize`.
    func batches(of name: String, count: Int, now: UInt64) -> [[Change]] {
        stride(from: 1, through: count, by: batchSize).map { start in
            (start..<min(start + batchSize, count + 1)).map { seq in
                Change(
                    device: name, seq: Int64(seq), hlc: HLC(milliseconds: now, counter: UInt16(seq % 65_536)),
                    operation: .donation(
                        event: "opened-detail", id: "\(name):\(seq)", date: Int64(now),
                        info: .object(["yardID": .int(7)])))
            }
        }
    }

    /// `--store-only`: every device's changes go to `SyncStore.push` from a task of its own, one
    /// batch after the other, as the push route calls it (the token already confirmed).
    func pushToStore(_ server: BenchServer, names: [String]) async throws {
        _ = try await server.account("bench", devices: names)
        let perDevice = total / devices
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        var batches: [String: [[Change]]] = [:]
        for name in names { batches[name] = self.batches(of: name, count: perDevice, now: now) }
        let store = server.store
        let cpuBefore = processCPUSeconds()
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in names {
                let identity = DeviceIdentity(accountID: 1, device: name)
                let list = batches[name]!
                group.addTask {
                    for batch in list { _ = try await store.push(batch, from: identity) }
                }
            }
            try await group.waitForAll()
        }
        let seconds = (clock.now - start).milliseconds / 1000
        let cpu = processCPUSeconds() - cpuBefore
        let stored = try await store.logCount(account: 1)
        guard stored == perDevice * devices else {
            throw BenchError("stored \(stored), expected \(perDevice * devices)")
        }
        let pushes = batches.values.reduce(0) { $0 + $1.count }
        print(
            "push-ingest --store-only backend=\(backend == "sqlite" ? "sqlite" : "postgres") devices=\(devices) batch=\(batchSize) changes=\(stored): "
                + "\(format(seconds, 2)) s, \(Int(Double(stored) / seconds)) changes/s; CPU "
                + "\(format(cpu / Double(pushes) * 1_000_000, 0)) µs per push")
    }
}

/// A new replica pulls 100,000 changes from the server (target under 2 s).
struct ColdPull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cold-pull")
    @Option var port = 18_081
    @Option var changes = 100_000
    @Option var pullLimit = 5000
    @Flag(help: "The new device is a fresh `tipsync-agent sync`, timed as a whole process.") var agent = false
    @Flag(help: "The new device keeps the changes in memory (a `ReplicaState`), as the Yjs peer's client does.")
    var memory = false
    @Flag(
        help:
            "Only fetch the pages (each next page requested from the cursor), no decode nor merge: the server's and the transport's share."
    )
    var fetchOnly = false
    @Option(help: "sqlite, postgres (a throwaway server) or a postgres:// URL.") var backend = "sqlite"
    @Flag(
        help:
            "The server runs as its own `tipsync-server` process (SQLite), as devices meet it, instead of in this process, where its request handling shares the client's threads."
    )
    var serverProcess = false
    @Flag(
        help:
            "The server compacts the account first, as it does by itself once a log has grown by --auto-compact-after entries: the new device receives the account's state (protocol.md §8), not its history."
    )
    var compacted = false
    @Option(
        help:
            "With --fetch-only --server-process: this many new devices' fetches in a row, and the server process's CPU per fetch (its clock ticks are 10 ms; many fetches make the mean exact)."
    )
    var repeats = 1

    func run() async throws {
        let server = try await BenchServer.start(port: port, backend: backend)
        defer { server.stop() }
        let tokens = try await server.account("bench", devices: ["writer", "reader", "warm-up"])
        let writer = DeviceIdentity(accountID: 1, device: "writer")
        let all = coldPullChanges(changes)
        for start in stride(from: 0, to: all.count, by: 1000) {
            _ = try await server.store.push(Array(all[start..<min(start + 1000, all.count)]), from: writer)
        }
        // What the new device must end with: every donation, or those compaction keeps (rules see the same).
        var donations = changes - changes / 10
        if compacted {
            let started = ContinuousClock.now
            let dropped = try await LogCompactor(store: server.store).compact(account: writer.accountID)
            let took = ContinuousClock.now - started
            // Of which: keeping the state compressed for new devices (KeptStatePage), timed again alone.
            let keepingStarted = ContinuousClock.now
            let keptPages = try await LogCompactor(store: server.store).keepState(account: writer.accountID)
            let keeping = ContinuousClock.now - keepingStarted
            var (keptBytes, keptText, keptCursor) = (0, 0, Int64(0))
            while let kept = try await server.store.pull(
                account: writer.accountID, after: keptCursor, limit: pullLimit, device: nil, confirming: nil,
                keptPages: true
            ).kept {
                (keptBytes, keptText, keptCursor) = (
                    keptBytes + kept.segment.bytes.readableBytes, keptText + kept.segment.length, kept.last
                )
            }
            print("  kept: \(keptText) bytes of change texts as \(keptBytes) bytes compressed")
            donations = try await server.store.logEntries(account: writer.accountID).filter {
                if case .donation = $0.change.operation { true } else { false }
            }.count
            print(
                "cold-pull --compacted: compaction dropped \(dropped) entries in \(format(took.milliseconds, 1)) ms (of which keeping its \(keptPages) full pages compressed for new devices takes \(format(keeping.milliseconds, 1)) ms); the log holds \(try await server.store.logCount(account: writer.accountID)) entries, \(donations) of them donations"
            )
        }
        let named =
            (backend == "sqlite" ? "" : " backend=postgres") + (serverProcess ? " --server-process" : "")
            + (compacted ? " --compacted" : "")
        var url = server.url
        var process: ServerProcess?
        defer { process?.stop() }
        if serverProcess {
            // The same database, served by a `tipsync-server` process on the next port; the
            // in-process server stays idle.
            guard backend == "sqlite" else { throw BenchError("--server-process runs SQLite only") }
            // As a server that has run a while has: the account's tip usage summarized, so the new
            // process does not derive it from the whole log while the device pulls.
            try await TipUsageDerivation(server.store).summarizeTipUsage(account: writer.accountID)
            process = try await ServerProcess.start(
                port: port + 1, database: "sqlite:" + server.directory.appendingPathComponent("server.sqlite").path)
            url = URL(string: "http://127.0.0.1:\(port + 1)")!
            // And as a server that has served before: another device's cold start first (not
            // timed), so the process's allocator and caches are past their first use.
            try await Self.fetchAll(server: url, token: tokens["warm-up"]!, pullLimit: pullLimit)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tipsync-bench-replica-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        if agent {
            try await Self.agentSync(
                server: url, token: tokens["reader"]!, directory: directory, changes: changes, donations: donations,
                named: named)
            return
        }
        if fetchOnly, repeats > 1, let process {
            let clock = ContinuousClock()
            let (cpu, start) = (process.cpuSeconds, clock.now)
            for _ in 0..<repeats {
                _ = try await Self.fetchAll(server: url, token: tokens["reader"]!, pullLimit: pullLimit)
            }
            let (elapsed, spent) = (clock.now - start, process.cpuSeconds - cpu)
            print(
                "cold-pull --fetch-only\(named) changes=\(changes) repeats=\(repeats): per new device \(format(elapsed.milliseconds / Double(repeats), 1)) ms wall, "
                    + "the server process's CPU \(format(spent * 1000 / Double(repeats), 1)) ms")
            return
        }
        if memory || fetchOnly {
            let serverCPU = process?.cpuSeconds
            defer {
                // The server's own share, when it runs as its own process (clock ticks: 10 ms steps).
                if let serverCPU, let process {
                    print(
                        "  the server process's CPU meanwhile: \(format((process.cpuSeconds - serverCPU) * 1000, 0)) ms"
                    )
                }
            }
            try await Self.intoMemory(
                server: url, token: tokens["reader"]!, changes: changes, donations: donations, pullLimit: pullLimit,
                fetchOnly: fetchOnly, named: named)
            return
        }
        let replica = try TipsReplica(directory: directory, deviceID: "reader")
        var configuration = SyncConfiguration(server: url, token: tokens["reader"]!)
        configuration.pullLimit = pullLimit
        let client = SyncClient(replica: replica, configuration: configuration)
        let clock = ContinuousClock()
        let start = clock.now
        try await client.syncOnce()
        let elapsed = clock.now - start
        let held = replica.state.events.values.reduce(0) { $0 + $1.donations.count }
        guard held == donations else { throw BenchError("replica holds \(held) donations, not \(donations)") }
        print(
            "cold-pull\(named) changes=\(changes) pullLimit=\(pullLimit): \(format(elapsed.milliseconds / 1000, 3)) s into a new replica"
        )
    }
}

extension ColdPull {
    /// Pulls every page and merges it into a `ReplicaState` (no database), pipelined as the sync
    /// client pulls: while page n merges, page n+1 decodes and page n+2 is requested (from n+1's
    /// cursor, read before its decode).
    static func intoMemory(
        server: URL, token: String, changes: Int, donations expected: Int, pullLimit: Int, fetchOnly: Bool = false,
        named: String = ""
    ) async throws {
        let transport = URLSessionTransport(baseURL: server)
        @Sendable func fetch(after cursor: String?) async throws -> Data {
            var path = "/v1/pull?limit=\(pullLimit)"
            if let cursor { path += "&cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }
            let response = try await transport.send(
                SyncHTTPRequest(method: "GET", path: path, headers: ["Authorization": "Bearer \(token)"]))
            guard response.status == 200 else { throw BenchError("pull answered \(response.status)") }
            return response.body
        }
        /// A page's decode, with the next page requested first when there is one.
        @Sendable func read(_ body: Data) -> (page: Task<PullResponse, any Error>, next: Task<Data, any Error>?) {
            let continuation = PullResponse.continuation(of: body)
            let next = continuation.flatMap { $0.more ? $0.cursor : nil }.map { cursor in
                Task { try await fetch(after: cursor) }
            }
            return (Task.detached { try JSONCoding.decode(PullResponse.self, from: body) }, next)
        }
        let clock = ContinuousClock()
        if fetchOnly {
            markProfileWindow("start")
            defer { markProfileWindow("end") }
            let start = clock.now
            let cpu = processCPUSeconds()
            let (pages, bytes) = try await fetchAll(server: server, token: token, pullLimit: pullLimit)
            let elapsed = clock.now - start
            print(
                "cold-pull --fetch-only\(named) changes=\(changes) pullLimit=\(pullLimit): \(pages) pages, \(bytes) bytes in "
                    + "\(format(elapsed.milliseconds, 1)) ms, process CPU \(format((processCPUSeconds() - cpu) * 1000, 1)) ms"
            )
            return
        }
        markProfileWindow("start")
        defer { markProfileWindow("end") }
        let start = clock.now
        let cpu = processCPUSeconds()
        var state = ReplicaState()
        var current = read(try await fetch(after: nil))
        while true {
            let page = try await current.page.value
            let following = current.next.map { next in Task { read(try await next.value) } }
            _ = state.apply(page.changes)
            guard let following else {
                guard !page.more else { throw BenchError("a page said more without a readable cursor") }
                break
            }
            current = try await following.value
        }
        let elapsed = clock.now - start
        let donations = state.events.values.reduce(0) { $0 + $1.donations.count }
        guard donations == expected else { throw BenchError("memory holds \(donations) donations, not \(expected)") }
        print(
            "cold-pull --memory\(named) changes=\(changes) pullLimit=\(pullLimit): \(format(elapsed.milliseconds / 1000, 3)) s into memory"
                + " (process CPU \(format((processCPUSeconds() - cpu) * 1000, 1)) ms, "
                + (named.contains("--server-process") ? "the client's)" : "server's and client's)")
        )
    }

    /// Every page, one after another, not decoded: how many and their bytes.
    @discardableResult
    static func fetchAll(server: URL, token: String, pullLimit: Int) async throws -> (pages: Int, bytes: Int) {
        let transport = URLSessionTransport(baseURL: server)
        var cursor: String? = nil
        var pages = 0
        var bytes = 0
        repeat {
            var path = "/v1/pull?limit=\(pullLimit)"
            if let cursor { path += "&cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }
            let response = try await transport.send(
                SyncHTTPRequest(method: "GET", path: path, headers: ["Authorization": "Bearer \(token)"]))
            guard response.status == 200 else { throw BenchError("pull answered \(response.status)") }
            pages += 1
            bytes += response.body.count
            cursor = PullResponse.continuation(of: response.body).flatMap { $0.more ? $0.cursor : nil }
        } while cursor != nil
        return (pages, bytes)
    }

    /// `tipsync-agent init` (not timed), then `tipsync-agent sync` on the empty store, timed from
    /// launch to exit: process start, every page pulled and persisted, the store closed.
    static func agentSync(
        server: URL, token: String, directory: URL, changes: Int, donations expected: Int, named: String = ""
    ) async throws {
        func agentProcess(_ arguments: [String]) throws -> Process {
            let process = Process()
            process.executableURL = agentExecutable
            process.arguments = arguments + ["--store", directory.path]
            process.standardOutput = FileHandle.nullDevice
            return process
        }
        let initialize = try agentProcess([
            "init", "--server", server.absoluteString, "--token", token, "--device", "reader",
        ])
        try initialize.run()
        initialize.waitUntilExit()
        guard initialize.terminationStatus == 0 else { throw BenchError("tipsync-agent init failed") }
        let sync = try agentProcess(["sync"])
        let clock = ContinuousClock()
        let start = clock.now
        // Off the cooperative pool: the in-process server must keep answering while this waits.
        try await Task.detached {
            try sync.run()
            sync.waitUntilExit()
        }.value
        let elapsed = clock.now - start
        guard sync.terminationStatus == 0 else { throw BenchError("tipsync-agent sync failed") }
        let replica = try Agent(store: AgentStore(directory: directory), environment: [:]).replica
        let donations = replica.state.events.values.reduce(0) { $0 + $1.donations.count }
        guard donations == expected else { throw BenchError("the agent holds \(donations) donations, not \(expected)") }
        print(
            "cold-pull --agent\(named) changes=\(changes): `tipsync-agent sync` took \(format(elapsed.milliseconds / 1000, 3)) s as a whole process"
        )
    }
}

/// Dismiss on device A → merged on device B (B runs the real sync loop: a live stream that carries
/// changes), while N other devices of the same account hold live streams and receive and merge every
/// change too (a child process, `live-receivers`), as real devices do.
struct LiveLatency: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "live-latency")
    @Option var port = 18_082
    @Option(help: "Other live devices of the same account, each receiving and merging every change.") var others = 1000
    @Option var rounds = 200
    @Flag(help: "B long-polls instead of following the live stream (for comparison).") var longPoll = false
    @Flag(
        help:
            "A runs in this process beside B instead of in a process of its own (their URLSessions then share one process's threads and timers)."
    ) var sameProcess = false

    func run() async throws {
        let server = try await BenchServer.start(port: port)
        defer { server.stop() }
        let names = ["a", "b"] + (0..<others).map { "o\($0)" }
        let tokens = try await server.account("bench", devices: names)
        let start = try await startCursor(server, token: tokens["a"]!)
        let receivers =
            others > 0
            ? try await LiveReceivers.spawn(port: port, tokens: (0..<others).map { tokens["o\($0)"]! }, cursor: start)
            : nil
        defer { receivers?.terminate() }

        let a: any LiveLatencyDevice =
            sameProcess
            ? try await InProcessDevice(server: server.url, token: tokens["a"]!)
            : try await LivePusher.spawn(server: server.url, token: tokens["a"]!)
        defer { a.stop() }
        let b = try benchReplica("b")
        var configurationB = SyncConfiguration(server: server.url, token: tokens["b"]!)
        configurationB.liveStream = !longPoll
        let clientB = SyncClient(replica: b, configuration: configurationB)
        let running = Task { try await clientB.run() }
        defer { running.cancel() }
        let tip = TipDefinition(id: LivePusher.tip, title: "Bench")
        // B's status changes, each with the instant B had it, taken by a task of its own as the
        // change arrives (not when this loop gets to it: A's answer may come later than B's merge).
        let (observed, observer) = AsyncStream<(TipStatus, UInt64)>.makeStream()
        let watching = Task {
            for await status in b.statusUpdates(of: { tip }) {
                observer.yield((status, DispatchTime.now().uptimeNanoseconds))
            }
        }
        defer { watching.cancel() }
        var updates = observed.makeAsyncIterator()
        _ = await updates.next()
        // Where the time goes: A's local change, its push (until A has the answer), and B's status
        // change after A's answer (negative when B had it first). Instants are CLOCK_MONOTONIC
        // nanoseconds, the same in both processes.
        var total = Measurement()
        var local = Measurement()
        var push = Measurement()
        var delivery = Measurement()
        for round in 0..<rounds {
            let invalidate = round % 2 == 0
            let expected: TipStatus = invalidate ? .invalidated(.tipClosed) : .available
            let instants = try await a.change(invalidate: invalidate)
            var merged: UInt64 = 0
            while let (status, instant) = await updates.next() {
                merged = instant
                if status == expected { break }
            }
            func duration(_ from: UInt64, _ to: UInt64) -> Duration { .nanoseconds(Int64(to) - Int64(from)) }
            total.samples.append(duration(instants.started, merged))
            local.samples.append(duration(instants.started, instants.changed))
            push.samples.append(duration(instants.changed, instants.pushed))
            delivery.samples.append(duration(instants.pushed, merged))
        }
        func summary(_ measurement: Measurement) -> String {
            "p50 \(format(measurement.percentile(0.5).milliseconds, 2)) / p99 "
                + "\(format(measurement.percentile(0.99).milliseconds, 2)) ms"
        }
        print(
            "live-latency others=\(others) rounds=\(rounds)\(sameProcess ? " same-process" : "")\(longPoll ? " long-poll" : ""): "
                + "p50 \(format(total.percentile(0.5).milliseconds, 2)) ms, "
                + "p99 \(format(total.percentile(0.99).milliseconds, 2)) ms from A's change to B's merge "
                + "(\(others) other devices receiving and merging every change); A's change \(summary(local)), "
                + "its push \(summary(push)), B's status change after A's answer \(summary(delivery))"
        )
    }
}

/// A new replica in a temporary directory.
func benchReplica(_ device: String) throws -> TipsReplica {
    try TipsReplica(
        directory: FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-bench-\(UUID().uuidString)"),
        deviceID: device)
}

/// Device A of `live-latency`: makes a change and pushes it as its sync loop does (`push()`).
protocol LiveLatencyDevice: Sendable {
    /// Invalidates the tip (or resets its eligibility) and pushes; the instants (CLOCK_MONOTONIC
    /// nanoseconds) it started, had the change, and had the push's answer.
    func change(invalidate: Bool) async throws -> (started: UInt64, changed: UInt64, pushed: UInt64)
    func stop()
}

/// A in the benchmark's own process.
struct InProcessDevice: LiveLatencyDevice {
    let replica: TipsReplica
    let client: SyncClient

    init(server: URL, token: String) async throws {
        replica = try benchReplica("a")
        client = SyncClient(replica: replica, configuration: SyncConfiguration(server: server, token: token))
        try await client.syncOnce()
    }

    func change(invalidate: Bool) async throws -> (started: UInt64, changed: UInt64, pushed: UInt64) {
        try await LivePusher.change(replica, client, invalidate: invalidate)
    }

    func stop() {}
}

/// Child process: device A of `live-latency` in a process of its own, as a real device is. Reads
/// `invalidate` or `reset` lines on stdin; for each, changes the tip, pushes with its `SyncClient`
/// and prints the three instants. Prints `ready` first.
struct LivePusher: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "live-pusher", shouldDisplay: false)
    static let tip = "bench-tip"
    @Option var server: String
    @Option var token: String

    func run() async throws {
        let replica = try benchReplica("a")
        let client = SyncClient(
            replica: replica, configuration: SyncConfiguration(server: URL(string: server)!, token: token))
        try await client.syncOnce()
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        while let line = readLine() {
            let instants = try await Self.change(replica, client, invalidate: line == "invalidate")
            FileHandle.standardOutput.write(Data("\(instants.started) \(instants.changed) \(instants.pushed)\n".utf8))
        }
    }

    static func change(_ replica: TipsReplica, _ client: SyncClient, invalidate: Bool) async throws -> (
        started: UInt64, changed: UInt64, pushed: UInt64
    ) {
        let started = DispatchTime.now().uptimeNanoseconds
        if invalidate {
            try replica.invalidate(tip: tip, reason: .tipClosed)
        } else {
            try replica.resetEligibility(tip: tip)
        }
        let changed = DispatchTime.now().uptimeNanoseconds
        try await client.push()
        return (started, changed, DispatchTime.now().uptimeNanoseconds)
    }

    /// Starts the child; returns it once its replica has synced.
    static func spawn(server: URL, token: String) async throws -> Child {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["live-pusher", "--server", server.absoluteString, "--token", token]
        process.standardOutput = Pipe()
        process.standardInput = Pipe()
        try process.run()
        guard try await LiveReceivers.nextLine(process) == "ready" else { throw BenchError("A did not start") }
        return Child(process: process)
    }

    /// The running child, as `live-latency` drives it.
    struct Child: LiveLatencyDevice {
        let process: Process

        func change(invalidate: Bool) async throws -> (started: UInt64, changed: UInt64, pushed: UInt64) {
            guard let input = process.standardInput as? Pipe else { throw BenchError("A is not running") }
            try input.fileHandleForWriting.write(contentsOf: Data((invalidate ? "invalidate\n" : "reset\n").utf8))
            let numbers = try await LiveReceivers.nextLine(process).split(separator: " ").compactMap { UInt64($0) }
            guard numbers.count == 3 else { throw BenchError("A failed to push") }
            return (numbers[0], numbers[1], numbers[2])
        }

        func stop() { process.terminate() }
    }
}

/// Server CPU per change delivered over live streams: D devices of one account each hold a stream
/// and merge every change (`live-receivers`, a child process); one device pushes K single-change
/// pushes (issue 14's mix) over a keep-alive connection on a thread of its own. The server's CPU is
/// this process's CPU less that thread's. `--paced`: each push waits until every device merged the
/// one before (no page carries more than one change: the worst case).
struct LiveDelivery: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live-delivery", abstract: "Server CPU per change delivered to D live devices that merge it.")
    @Option var devices = 1002
    @Option var changes = 2000
    @Flag var paced = false
    @Option var port = 18_470

    func run() async throws {
        let server = try await BenchServer.start(port: port)
        defer { server.stop() }
        let names = (0..<devices).map { "d\($0)" }
        let tokens = try await server.account("delivery", devices: names)
        let start = try await startCursor(server, token: tokens["d0"]!)
        let receivers = try await LiveReceivers.spawn(
            port: port, tokens: names.map { tokens[$0]! }, cursor: start, expect: changes, paced: paced)
        defer { receivers.terminate() }
        let memory = residentMemoryBytes()
        let token = tokens["d0"]!
        let bodies = (1...changes).map { seq in
            let change = Change(
                device: "d0", seq: Int64(seq),
                hlc: HLC(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000), counter: 0),
                operation: mixedOperation(seq, device: "d0"))
            return Array((try? JSONCoding.encoder.encode(PushRequest(changes: [change]))) ?? Data())
        }
        let cpuBefore = processCPUSeconds()
        let started = ContinuousClock.now
        let pusherCPU: Double
        if paced {
            let gate = PacedGate()
            async let pushed = onThread {
                let connection = try HTTPConnection(port: port)
                for (index, body) in bodies.enumerated() {
                    let (status, _, _, _) = try connection.exchange(
                        "POST", "/v1/push",
                        headers: ["Authorization: Bearer \(token)", "Content-Type: application/json"], body: body)
                    guard status == 200 else { throw BenchError("push answered \(status)") }
                    gate.wait(until: index + 1)
                }
            }
            while true {
                let line = try await LiveReceivers.nextLine(receivers)
                if line.hasPrefix("at "), let at = Int(line.dropFirst(3)) { gate.reached(at) }
                if line.hasPrefix("merged") || line.isEmpty { break }
            }
            pusherCPU = try await pushed
        } else {
            pusherCPU = try await pushOnThread(bodies, token: token, port: port)
            _ = try await LiveReceivers.nextLine(receivers)
        }
        let seconds = (ContinuousClock.now - started).milliseconds / 1000
        let serverCPU = processCPUSeconds() - cpuBefore - pusherCPU
        let perChange = serverCPU / Double(changes) * 1000
        print(
            "live-delivery devices=\(devices) changes=\(changes)\(paced ? " paced" : ""): every device merged all after "
                + "\(format(seconds, 2)) s; server CPU \(format(serverCPU, 2)) s = \(format(perChange, 2)) ms per change = "
                + "\(format(perChange * 1000 / Double(devices), 1)) µs per delivered copy; server RSS with the streams "
                + "open \(memory / 1_048_576) MiB"
        )
    }
}

/// The account's cursor before anything was pushed (where the benchmark's streams start).
func startCursor(_ server: BenchServer, token: String) async throws -> String {
    let (data, _) = try await URLSession.shared.data(for: server.request("v1/pull", token: token))
    return try JSONCoding.decode(PullResponse.self, from: data).cursor
}

/// Issue 14's mix: 80% donations, 15% parameter sets, 5% invalidations.
func mixedOperation(_ seq: Int, device: String) -> Change.Operation {
    switch seq % 20 {
    case 0: .eligibility(tip: "tip-\(seq % 7)", state: .invalidated(.tipClosed))
    case 1, 2, 3: .parameter(id: "param-\(seq % 11)", value: .int(Int64(seq)))
    default: .donation(event: "event-\(seq % 5)", id: "\(device):\(seq)", date: Int64(seq), info: nil)
    }
}

/// Lets the paced pusher go on once every device holds the change it pushed last.
final class PacedGate: Sendable {
    private let condition = NSCondition()
    private let state = Mutex<Int>(0)

    func reached(_ count: Int) {
        condition.lock()
        state.withLock { $0 = max($0, count) }
        condition.broadcast()
        condition.unlock()
    }

    func wait(until count: Int) {
        condition.lock()
        while state.withLock({ $0 }) < count { condition.wait() }
        condition.unlock()
    }
}

/// Server memory with N idle live connections (target under 1 GiB for 10,000).
struct IdleConnections: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "idle-connections")
    @Option var port = 18_083
    @Option var connections = 10_000
    @Flag(help: "Open streams that carry changes (`?cursor=`, as devices do) instead of notify-only ones.")
    var carrying = false

    func run() async throws {
        let server = try await BenchServer.start(port: port)
        defer { server.stop() }
        var tokens: [String] = []
        for account in 0..<(connections / 100) {
            let devices = try await server.account("idle-\(account)", devices: (0..<100).map { "d\($0)" }).values
            let query = carrying ? "?cursor=\(try await startCursor(server, token: devices.first!))" : ""
            tokens += devices.map { "\($0) \(query)" }
        }
        let before = residentMemoryBytes()
        let heapBefore = SystemAllocator.heapStatistics()
        let holder = try HoldConnections.spawn(port: port, tokens: tokens)
        defer { holder.terminate() }
        try await HoldConnections.waitUntilHeld(holder)
        let after = residentMemoryBytes()
        let heapAfter = SystemAllocator.heapStatistics()
        let heap = heapBefore.flatMap { before in heapAfter.map { (before, $0) } }.map { before, after in
            "; live heap \((after.inUse - before.inUse) / max(1, connections)) bytes per connection, "
                + "heap held \((after.held - before.held) / max(1, connections))"
        }
        print(
            "idle-connections n=\(connections)\(carrying ? " carrying" : ""): server RSS \(after / 1_048_576) MiB with them open "
                + "(\(before / 1_048_576) MiB before; \((after - before) / max(1, connections)) bytes per connection\(heap ?? ""))"
        )
    }
}

extension Measurement {
    mutating func timeAsync(_ body: () async throws -> Void) async rethrows {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        samples.append(clock.now - start)
    }
}
