import ArgumentParser
import CNIOLinux
import Foundation
import Synchronization
import TipSync
import TipSyncServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Many live devices and a mixed push/pull workload for a while: errors (must be 0), request
/// latency, and the server's memory at start, at its peak, and after every device has gone (a
/// leak shows as memory that does not come back). The devices run in a child process, so the
/// server's memory is measured alone.
struct LoadTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load", abstract: "N live devices (SSE) plus a mixed push/pull workload for S seconds.")
    @Option var port = 18_090
    @Option(help: "Live devices (one SSE stream each).") var devices = 5000
    @Option(help: "Devices per account.") var perAccount = 10
    @Option(help: "Concurrent request loops (each a keep-alive connection of one device at a time).")
    var workers = 32
    @Option(help: "Seconds of workload.") var seconds = 60

    @Option(help: "Rounds of the workload against the same server: memory that grows round after round is a leak.")
    var rounds = 3

    @Option(help: "A folder to copy the server's /proc/self/smaps into at the start and after each round.")
    var smaps: String?

    @Option(help: "Seconds to keep the server up after the report (for a profiler or a look at /proc).")
    var hold = 0

    @Option(
        help:
            "The server's --memory-release-interval in seconds (its default is 30; shorter here to keep the run short)."
    )
    var memoryReleaseInterval = 4.0

    func run() async throws {
        let server = try await BenchServer.start(port: port, memoryReleaseInterval: memoryReleaseInterval)
        defer { server.stop() }
        // Each round's devices are new (fresh accounts, sequence numbers from 1).
        var files: [URL] = []
        for round in 1...max(1, rounds) {
            var tokens: [String] = []
            for account in 0..<max(1, devices / perAccount) {
                let names = (0..<perAccount).map { "d\($0)" }
                let byName = try await server.account("load-\(round)-\(account)", devices: names)
                tokens += names.map { "\(account)/\($0)/\(byName[$0]!)" }
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "tipsync-load-\(UUID().uuidString)")
            try tokens.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            files.append(file)
        }
        // The start: the server after creating every round's accounts and tokens, one request, and
        // the memory release that follows (as after each round).
        func mib(_ bytes: Int) -> String { "\(format(Double(bytes) / 1_048_576, 1)) MiB" }
        var releases = try await server.memoryReleases()
        _ = try await URLSession.shared.data(for: server.request("v1/pull", token: String(tokensOf(files[0])[0])))
        releases = try await server.waitForMemoryRelease(after: releases)
        let start = residentMemoryBytes()
        let startBreakdown = residentBreakdown()
        copySmaps(as: "start")
        var afterRounds: [Int] = []
        var liveHeaps: [String] = []
        var peaks: [Int] = []
        for (round, file) in zip(1..., files) {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = [
                "load-clients", "--port", String(port), "--tokens", file.path, "--workers", String(workers),
                "--seconds", String(seconds),
            ]
            let output = Pipe()
            child.standardOutput = output
            try child.run()
            let report = Task.detached {
                String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            }
            var peak = residentMemoryBytes()
            while child.isRunning {
                peak = max(peak, residentMemoryBytes())
                try await Task.sleep(for: .milliseconds(200))
            }
            let summary = await report.value
            // Every connection has closed with the child. Memory is read once the server has released
            // SQLite's caches and glibc's free pages (``MemoryRelease``, within two intervals of the
            // burst's end), and a second later.
            releases = try await server.waitForMemoryRelease(after: releases)
            try await Task.sleep(for: .seconds(1))
            afterRounds.append(residentMemoryBytes())
            liveHeaps.append(SystemAllocator.heapStatistics().map { mib($0.inUse) } ?? "?")
            peaks.append(peak)
            copySmaps(as: "round-\(round)")
            print("round \(round): " + summary.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        print(
            "server RSS start \(mib(start)); peak per round \(peaks.map(mib).joined(separator: ", ")); "
                + "after each round, all disconnected and the server idle: "
                + "\(afterRounds.map(mib).joined(separator: ", ")) "
                + "(last \(format(Double(afterRounds.last! - start) * 100 / Double(max(1, start)), 1))% above start); "
                + "live heap after each round \(liveHeaps.joined(separator: ", ")); "
                + "at start \(startBreakdown), at the end \(residentBreakdown())"
        )
        if hold > 0 { try await Task.sleep(for: .seconds(hold)) }
    }
}

extension LoadTest {
    /// The tokens of a round's token file.
    func tokensOf(_ file: URL) throws -> [Substring] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: "/", maxSplits: 2)[2]
        }
    }

    /// Copies `/proc/self/smaps` to `<smaps>/<name>.smaps` when `--smaps` is given: where resident
    /// memory sits (heap arenas, thread stacks, SQLite's file mappings) at that moment.
    func copySmaps(as name: String) {
        guard let smaps else { return }
        // procfs files report a size of 0: read until the end instead of trusting it.
        let fd = open("/proc/self/smaps", O_RDONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while case let count = read(fd, &buffer, buffer.count), count > 0 { data.append(buffer, count: count) }
        try? FileManager.default.createDirectory(atPath: smaps, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: "\(smaps)/\(name).smaps", contents: data)
    }
}

/// Child process of ``LoadTest``: holds one live stream per device (reading and discarding its
/// events) while `workers` threads push and pull as random devices over keep-alive connections.
struct LoadClients: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "load-clients", shouldDisplay: false)
    @Option var port: Int
    @Option var tokens: String
    @Option var workers: Int
    @Option var seconds: Int

    struct Device {
        var token: String
        var name: String
        var seq: Int64 = 0
        var cursor: String?
    }

    func run() throws {
        let lines = try String(contentsOfFile: tokens, encoding: .utf8).split(separator: "\n")
        let devices = lines.map { line -> Device in
            let parts = line.split(separator: "/", maxSplits: 2)
            return Device(token: String(parts[2]), name: String(parts[1]))
        }
        // Live streams: one per device.
        var live: [Int32] = []
        for device in devices {
            let fd = try connectLoopback(port: port)
            sendAll(fd, "GET /v1/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(device.token)\r\n\r\n")
            live.append(fd)
        }
        let liveSockets = live
        let liveDropped = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let drain = Thread {
            var fds = liveSockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !stop.load(ordering: .relaxed) {
                guard poll(&fds, nfds_t(fds.count), 100) > 0 else { continue }
                for index in fds.indices where fds[index].revents != 0 && fds[index].fd >= 0 {
                    if recv(fds[index].fd, &buffer, buffer.count, 0) <= 0 {
                        liveDropped.add(1, ordering: .relaxed)
                        fds[index].fd = -1
                    }
                }
            }
        }
        drain.start()

        // The workload: 80% pushes of 1–5 changes (donations, parameter sets, invalidations), 20% pulls.
        let results = Mutex<(latencies: [Double], errors: Int, requests: Int)>(([], 0, 0))
        let shared = Mutex(devices)
        let deadline = Date().addingTimeInterval(Double(seconds))
        let done = DispatchGroup()
        for worker in 0..<workers {
            done.enter()
            Thread {
                defer { done.leave() }
                var random = SystemRandomNumberGenerator()
                var fd: Int32 = -1
                var latencies: [Double] = []
                var errors = 0
                while Date() < deadline {
                    let index = Int.random(in: 0..<devices.count, using: &random) / workers * workers + worker
                    guard index < devices.count else { continue }
                    var device = shared.withLock { $0[index] }  // each worker owns the devices ≡ worker
                    if fd < 0 { fd = (try? connectLoopback(port: port)) ?? -1 }
                    let request: String
                    if Int.random(in: 0..<10, using: &random) < 8 {
                        let count = Int.random(in: 1...5, using: &random)
                        let now = UInt64(Date().timeIntervalSince1970 * 1000)
                        let changes = (1...count).map { offset -> Change in
                            let seq = device.seq + Int64(offset)
                            let roll = Int.random(in: 0..<100, using: &random)
                            let operation: Change.Operation =
                                roll < 80
                                ? .donation(event: "e", id: "\(device.name):\(seq)", date: Int64(now), info: nil)
                                : roll < 95
                                    ? .parameter(id: "p", value: .int(seq))
                                    : .eligibility(tip: "t\(seq % 50)", state: .invalidated(.tipClosed))
                            return Change(
                                device: device.name, seq: seq, hlc: HLC(milliseconds: now, counter: UInt16(offset)),
                                operation: operation)
                        }
                        let body = String(
                            decoding: (try? JSONCoding.encoder.encode(PushRequest(changes: changes))) ?? Data(),
                            as: UTF8.self)
                        request =
                            "POST /v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(device.token)\r\n"
                            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
                        device.seq += Int64(count)
                    } else {
                        let cursor = device.cursor.map { "&cursor=\($0)" } ?? ""
                        request =
                            "GET /v1/pull?limit=1000\(cursor) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            + "Authorization: Bearer \(device.token)\r\n\r\n"
                    }
                    let started = DispatchTime.now().uptimeNanoseconds
                    let response = fd >= 0 && sendAll(fd, request) ? readResponse(fd) : nil
                    latencies.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
                    guard let response, response.status == 200 else {
                        errors += 1
                        if fd >= 0 { close(fd) }
                        fd = -1
                        continue
                    }
                    if request.hasPrefix("GET"),
                        let page = try? JSONCoding.decode(PullResponse.self, from: response.body)
                    {
                        device.cursor = page.cursor
                    }
                    shared.withLock { $0[index] = device }
                }
                if fd >= 0 { close(fd) }
                results.withLock {
                    $0.latencies += latencies
                    $0.errors += errors
                    $0.requests += latencies.count
                }
            }.start()
        }
        done.wait()
        stop.store(true, ordering: .relaxed)
        let summary = results.withLock { $0 }
        let sorted = summary.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
        }
        print(
            "load devices=\(devices.count) workers=\(workers) seconds=\(seconds): \(summary.requests) requests "
                + "(\(summary.requests / max(1, seconds))/s), errors \(summary.errors), live streams dropped "
                + "\(liveDropped.load(ordering: .relaxed)); latency p50 \(format(percentile(0.5), 2)) ms, "
                + "p99 \(format(percentile(0.99), 2)) ms, max \(format(sorted.last ?? 0, 1)) ms")
        for fd in live { close(fd) }
    }
}

func connectLoopback(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket() failed: errno \(errno)") }
    guard connectToLoopback(fd, port: port) == 0 else {
        close(fd)
        throw BenchError("connect failed: errno \(errno)")
    }
    return fd
}

/// A non-blocking socket whose connect to 127.0.0.1:`port` has begun (`EPOLLOUT` says when it is
/// made, `SO_ERROR` whether it failed); `nil` when it failed at once.
func startConnectingLoopback(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    guard connectToLoopback(fd, port: port) == 0 || errno == EINPROGRESS else {
        close(fd)
        return nil
    }
    return fd
}

/// `connect(2)` of `fd` to 127.0.0.1:`port`: its result (errno says why it is not 0).
func connectToLoopback(_ fd: Int32, port: Int) -> Int32 {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
}

@discardableResult
func sendAll(_ fd: Int32, _ text: String) -> Bool {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent > 0 else { return false }
        bytes = bytes.dropFirst(sent)
    }
    return true
}

/// Reads one HTTP/1.1 response with a `Content-Length` body.
func readResponse(_ fd: Int32) -> (status: Int, body: Data)? {
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    let separator: [UInt8] = [13, 10, 13, 10]
    var headEnd: Int?
    var length = 0
    while true {
        if headEnd == nil, let end = received.firstRange(of: separator)?.upperBound {
            headEnd = end
            let head = String(decoding: received[..<end], as: UTF8.self).lowercased()
            if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }) {
                length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        if let headEnd, received.count >= headEnd + length {
            let status = Int(String(decoding: received[9..<12], as: UTF8.self)) ?? 0
            return (status, Data(received[headEnd..<(headEnd + length)]))
        }
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        received += buffer[0..<count]
    }
}
