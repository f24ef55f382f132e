import ArgumentParser
import CNIOLinux
import Foundation
import TipSync
import TipSyncCore

#if canImport(Glibc)
    import Glibc
#endif

/// Child process: N devices that do what a live device does with a stream that carries changes —
/// `GET /v1/live?cursor=C`, de-chunk the body, read its events, decode each page and merge its
/// changes into the device's own ``ReplicaState`` (checking that the page continues its cursor).
/// Prints `held N` once every stream said `ready`; with `--expect K`, prints `merged` and exits once
/// every device holds K changes. (A separate process, so the server's CPU and memory are measured
/// alone.)
struct LiveReceivers: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "live-receivers", shouldDisplay: false)
    @Option var port: Int
    @Option(help: "File with one token per line.") var tokens: String
    @Option var cursor: String
    @Option(help: "Changes each device must merge before the process exits (0: run until killed).")
    var expect = 0
    @Flag(help: "Print `at K` whenever every device holds K more changes.") var paced = false
    @Flag(
        help:
            "Record, for each change another device made, the time from its stamp to its merge; read `total K` on stdin (K changes pushed in all), then report once every device holds its account's changes."
    ) var latency = false
    @Option var devicesPerAccount = 3
    @Flag(
        help:
            "Reconnect as protocol.md §17.3 says when the server ends a stream or cannot be reached (full jitter, base 1 s, maximum 60 s), at the device's cursor; print `held N reconnects R causes C` whenever every stream is open again (C: why attempts failed, `cause=count,…`)."
    ) var reconnect = false
    @Flag(
        help:
            "With --reconnect: write to standard error, each second while a stream is not open, how many are live, waiting, connecting and answered-but-not-ready, and why attempts failed."
    ) var timeline = false

    /// The stream request was answered with another status than 200.
    struct Refused: Error {
        let status: String
    }

    final class Receiver {
        var fd: Int32
        var device = ""
        var token = ""
        /// A non-blocking connect is in progress (`--reconnect`).
        var connecting = false
        /// Failures in a row since this device's stream last said `ready`.
        var failures = 0
        /// When the next attempt is due (seconds on the monotonic clock), while it waits.
        var reconnectAt: Double?
        var latencies: [Int64]?
        var head: [UInt8] = []
        var inBody = false
        var chunked = ChunkedBody()
        var events = ServerSentEvents()
        var state = ReplicaState()
        var cursor: String
        var merged = 0
        var pages = 0
        var ready = false
        /// How the last connection closed: `fin`, or `errno-N`.
        var closedBy = ""

        init(fd: Int32, cursor: String) {
            self.fd = fd
            self.cursor = cursor
        }

        /// A new connection's response starts from nothing (the merged state and cursor stay).
        func resetResponse() {
            head = []
            inBody = false
            chunked = ChunkedBody()
            events = ServerSentEvents()
            ready = false
        }

        /// Takes bytes off the socket; returns false when the server closed it.
        func read(into buffer: inout [UInt8]) throws -> Bool {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return true }  // nothing yet
            guard count > 0 else {
                closedBy = count == 0 ? "fin" : "errno-\(errno)"
                return false
            }
            var bytes = buffer[0..<count]
            if !inBody {
                head += bytes
                guard let end = head.firstRange(of: Array("\r\n\r\n".utf8)) else { return true }
                guard head.starts(with: Array("HTTP/1.1 200".utf8)) else {
                    throw Refused(status: String(decoding: head.dropFirst(9).prefix(3), as: UTF8.self))
                }
                inBody = true
                bytes = ArraySlice(head[end.upperBound...])
                head = []
            }
            for event in events.feed(chunked.feed(bytes)) {
                switch event.name {
                case "ready": ready = true
                case "changes":
                    let page = try JSONCoding.decode(PullResponse.self, from: Data(event.data.utf8))
                    guard page.from == cursor else { throw BenchError("a page does not continue the cursor") }
                    for change in page.changes { _ = state.apply(change) }
                    if latencies != nil {
                        let now = Int64(Date().timeIntervalSince1970 * 1000)
                        for change in page.changes where change.device != device {
                            latencies?.append(now - Int64(change.hlc.milliseconds))
                        }
                    }
                    cursor = page.cursor
                    merged += page.changes.count
                    pages += 1
                default: break
                }
            }
            return true
        }
    }

    func run() throws {
        let lines = try String(contentsOfFile: tokens, encoding: .utf8).split(separator: "\n")
        var receivers: [Receiver] = []
        let events = epoll_create1(0)
        /// The stream request at the receiver's cursor.
        func request(_ receiver: Receiver) -> String {
            let encoded =
                receiver.cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? receiver.cursor
            return
                "GET /v1/live?cursor=\(encoded) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(receiver.token)\r\n\r\n"
        }
        func watch(_ receiver: Receiver, _ index: Int, _ what: UInt32, _ operation: Int32) {
            var event = epoll_event()
            event.events = what
            event.data.u64 = UInt64(index)
            epoll_ctl(events, operation, receiver.fd, &event)
        }
        for line in lines {
            // `token` or `token device`.
            let parts = line.split(separator: " ")
            let receiver = Receiver(fd: -1, cursor: cursor)
            receiver.token = String(parts[0])
            receiver.device = parts.count > 1 ? String(parts[1]) : ""
            if latency { receiver.latencies = [] }
            if reconnect {
                receiver.fd = -1  // opened by the loop (its first slot), without blocking on a full backlog
            } else {
                receiver.fd = try connectLoopback(port: port)
                _ = request(receiver).withCString { send(receiver.fd, $0, strlen($0), 0) }
                watch(receiver, receivers.count, EPOLLIN.rawValue, EPOLL_CTL_ADD)
            }
            receivers.append(receiver)
        }
        var input = epoll_event()
        input.events = EPOLLIN.rawValue
        input.data.u64 = UInt64.max
        epoll_ctl(events, EPOLL_CTL_ADD, 0, &input)
        var ready = [epoll_event](repeating: epoll_event(), count: 256)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var announced = false
        var reported = 0
        var target: Int?
        var line: [UInt8] = []
        // `--reconnect`: streams open now, attempts waiting, attempts made since the last `held`.
        var live = 0
        var waiting = reconnect ? receivers.count : 0
        var attempts = 0
        var random = SplitMix64(seed: 0x5EED)
        func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
        /// Why attempts failed (and streams ended) since the last `held`.
        var causes: [String: Int] = [:]
        func describe(_ causes: [String: Int]) -> String {
            causes.isEmpty
                ? "-" : causes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }
        let begun = now()
        var traced = begun
        /// The stream ended or could not be opened (`cause`): try again after protocol.md §17.3's delay.
        //
        // Attempts wait in 10 ms slots (a timing wheel): a wake-up opens the due slots' receivers
        // only, not a scan of every receiver — at 100,000 devices a scan per wake-up took about a
        // core of the two the servers share.
        var slots: [Int: [Int]] = [:]
        func slot(_ time: Double) -> Int { Int((time * 100).rounded(.up)) }
        var nextSlot = slot(now())
        func schedule(_ receiver: Receiver, _ index: Int, at time: Double) {
            receiver.reconnectAt = time
            slots[max(slot(time), nextSlot), default: []].append(index)
        }
        if reconnect {
            for (index, receiver) in receivers.enumerated() { schedule(receiver, index, at: 0) }
        }
        func lost(_ receiver: Receiver, _ index: Int, _ cause: String) {
            causes[cause, default: 0] += 1
            if receiver.fd >= 0 { close(receiver.fd) }
            receiver.fd = -1
            receiver.connecting = false
            let draw = Double(random.next() >> 11) / Double(1 << 53)
            let delay: Double
            if receiver.ready {
                live -= 1
                delay = draw * 1  // a stream that began, ended by the server: within the base
            } else {
                delay = draw * min(60, pow(2, Double(min(receiver.failures, 6))))
                receiver.failures += 1
            }
            receiver.resetResponse()
            schedule(receiver, index, at: now() + delay)
            waiting += 1
        }
        /// Starts a non-blocking connect; the stream request goes once it is made.
        func open(_ receiver: Receiver, _ index: Int) {
            receiver.reconnectAt = nil
            waiting -= 1
            attempts += 1
            guard let fd = startConnectingLoopback(port: port) else { return lost(receiver, index, "socket-\(errno)") }
            receiver.fd = fd
            receiver.connecting = true
            watch(receiver, index, EPOLLOUT.rawValue, EPOLL_CTL_ADD)
        }
        while true {
            let timeout: Int32 = waiting > 0 ? 10 : -1
            let count = epoll_wait(events, &ready, Int32(ready.count), timeout)
            if waiting > 0 {
                let current = slot(now())
                while nextSlot <= current {
                    for index in slots.removeValue(forKey: nextSlot) ?? [] where receivers[index].reconnectAt != nil {
                        open(receivers[index], index)
                    }
                    nextSlot += 1
                }
            }
            for index in 0..<Int(max(0, count)) {
                let which = ready[index].data.u64
                if which == UInt64.max {
                    var byte: UInt8 = 0
                    while Glibc.read(0, &byte, 1) == 1 {
                        if byte == UInt8(ascii: "\n") {
                            let text = String(decoding: line, as: UTF8.self)
                            if text.hasPrefix("total "), let total = Int(text.dropFirst(6)) { target = total }
                            line = []
                            break
                        }
                        line.append(byte)
                    }
                    continue
                }
                let receiver = receivers[Int(which)]
                guard receiver.fd >= 0 else { continue }
                if receiver.connecting {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(receiver.fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    guard error == 0 else {
                        lost(receiver, Int(which), error == ECONNREFUSED ? "refused" : "connect-\(error)")
                        continue
                    }
                    guard sendAll(receiver.fd, request(receiver)) else {
                        lost(receiver, Int(which), "send-\(errno)")
                        continue
                    }
                    receiver.connecting = false
                    watch(receiver, Int(which), EPOLLIN.rawValue, EPOLL_CTL_MOD)
                    continue
                }
                let wasReady = receiver.ready
                let open: Bool
                var cause = ""
                do {
                    open = try receiver.read(into: &buffer)
                    if !open {
                        cause =
                            wasReady
                            ? "ended"
                            : receiver.inBody ? "closed-before-ready" : "closed-before-answer-\(receiver.closedBy)"
                    }
                } catch let refused as Refused where reconnect {
                    open = false  // a refusal: tried again like any failure
                    cause = "status-\(refused.status)"
                } catch  where reconnect {
                    open = false
                    cause = "unreadable"
                }
                if reconnect, !wasReady, receiver.ready {
                    live += 1
                    receiver.failures = 0
                }
                guard open else {
                    guard reconnect else { throw BenchError("the server closed a stream") }
                    lost(receiver, Int(which), cause)
                    continue
                }
            }
            if timeline, reconnect, live < receivers.count, now() - traced >= 1 {
                traced = now()
                let connecting = receivers.lazy.filter(\.connecting).count
                let answered = receivers.lazy.filter { $0.fd >= 0 && !$0.connecting && !$0.ready }.count
                FileHandle.standardError.write(
                    Data(
                        "receivers \(getpid()) t=\(Int(traced - begun)) live=\(live) waiting=\(waiting) connecting=\(connecting) asked=\(answered) causes \(describe(causes))\n"
                            .utf8))
            }
            if reconnect {
                if !announced, live == receivers.count {
                    announced = true
                    FileHandle.standardOutput.write(
                        Data("held \(receivers.count) reconnects \(attempts) causes \(describe(causes))\n".utf8))
                    attempts = 0
                    causes = [:]
                } else if live < receivers.count {
                    announced = false
                }
            } else if !announced, receivers.allSatisfy(\.ready) {
                announced = true
                FileHandle.standardOutput.write(Data("held \(receivers.count)\n".utf8))
            }
            if paced || expect > 0 {
                let least = receivers.lazy.map(\.merged).min() ?? 0
                if paced, least > reported {
                    reported = least
                    FileHandle.standardOutput.write(Data("at \(least)\n".utf8))
                }
                if expect > 0, least >= expect {
                    let pages = receivers.reduce(0) { $0 + $1.pages }
                    FileHandle.standardOutput.write(Data("merged \(pages)\n".utf8))
                    return
                }
            }
            if let target, receivers.reduce(0, { $0 + $1.merged }) >= target * devicesPerAccount {
                var all = receivers.flatMap { $0.latencies ?? [] }
                all.sort()
                func percentile(_ p: Double) -> Int64 {
                    all.isEmpty ? 0 : all[min(all.count - 1, Int(Double(all.count) * p))]
                }
                let pages = receivers.reduce(0) { $0 + $1.pages }
                FileHandle.standardOutput.write(
                    Data(
                        "merged \(pages) pages; \(all.count) deliveries to other devices: p50 \(percentile(0.5)) ms, p99 \(percentile(0.99)) ms, max \(all.last ?? 0) ms\n"
                            .utf8))
                return
            }
        }
    }

    /// Starts the child; returns it once every stream is open.
    static func spawn(
        port: Int, tokens lines: [String], cursor: String, expect: Int = 0, paced: Bool = false, latency: Bool = false,
        devicesPerAccount: Int = 3, reconnect: Bool = false, timeline: Bool = false
    ) async throws -> Process {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-tokens-\(UUID().uuidString)")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments =
            [
                "live-receivers", "--port", String(port), "--tokens", file.path, "--cursor", cursor, "--expect",
                String(expect),
            ] + (paced ? ["--paced"] : [])
            + (latency ? ["--latency", "--devices-per-account", String(devicesPerAccount)] : [])
            + (reconnect ? ["--reconnect"] : []) + (timeline ? ["--timeline"] : [])
        process.standardOutput = Pipe()
        process.standardInput = Pipe()
        try process.run()
        guard try await nextLine(process).hasPrefix("held") else { throw BenchError("the receivers failed to connect") }
        return process
    }

    /// The child's next line of output.
    static func nextLine(_ process: Process) async throws -> String {
        guard let pipe = process.standardOutput as? Pipe else { return "" }
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var line = Data()
                while true {
                    let byte = pipe.fileHandleForReading.readData(ofLength: 1)
                    if byte.isEmpty || byte == Data("\n".utf8) { break }
                    line += byte
                }
                continuation.resume(returning: String(decoding: line, as: UTF8.self))
            }
        }
    }
}

/// `Transfer-Encoding: chunked`, undone as the bytes arrive.
struct ChunkedBody {
    private var size: Int?
    private var sizeLine: [UInt8] = []
    private var skipCRLF = 0

    mutating func feed(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if skipCRLF > 0 {
                skipCRLF -= 1
                index += 1
            } else if let remaining = size {
                let take = min(remaining, bytes.endIndex - index)
                out += bytes[index..<index + take]
                index += take
                size = remaining - take == 0 ? nil : remaining - take
                if remaining - take == 0 { skipCRLF = 2 }
            } else {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\n") {
                    let text = String(decoding: sizeLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    sizeLine = []
                    size = Int(text.split(separator: ";").first ?? "", radix: 16)
                    if size == 0 { size = nil }
                } else {
                    sizeLine.append(byte)
                }
            }
        }
        return out
    }
}
