package import Foundation
import Hummingbird
package import Logging
import NIOCore
package import Prometheus
import ServiceLifecycle
package import TipSyncDeviceService
package import TipSyncServer
import TipSyncTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain TCP connection to the server, for what no HTTP client sends: nothing at all, junk, a
/// trickle, a declared body that never comes, a half-close. Blocking reads run on threads of their
/// own: never on the cooperative pool, and never on a dispatch queue (on Linux its workers are the
/// same few threads, so blocked reads there would starve every other test); every read is bounded
/// by a deadline.
package final class RawConnection: @unchecked Sendable {
    private let descriptor: Int32

    package init(port: Int) throws {
        // Kept at descriptor numbers from 2048 up: FoundationNetworking's socket manager uses
        // select(), which fails for descriptors ≥ 1024, so hundreds of test sockets at low numbers
        // would break every URLSession in the test process.
        let low = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard low >= 0 else { throw POSIXError(.EMFILE) }
        let high = fcntl(low, F_DUPFD, 2048)
        if high >= 0 { close(low) }
        descriptor = high >= 0 ? high : low
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close(2) here: a class's deinit runs when its init throws after every property is set,
        // and a second close would close whatever another test's socket reused the number for.
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED) }
    }

    deinit { close(descriptor) }

    /// Sends bytes; false when the server has closed the connection.
    @discardableResult
    package func send(_ text: String) -> Bool { send(bytes: Array(text.utf8)) }

    @discardableResult
    package func send(bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        return bytes.withUnsafeBytes { posixSend(descriptor, $0.baseAddress, $0.count) } >= 0
    }

    /// Closes the sending side (a FIN), as a client that gives up on a long-poll does.
    package func shutdownWrite() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Reads until the server closes the connection or `deadline` passes. Returns what was read and
    /// whether the connection was closed by then.
    package func readUntilClosed(within seconds: Double) async -> (text: String, closed: Bool) {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let end = Date().addingTimeInterval(seconds)
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let remaining = Int32(max(0, end.timeIntervalSinceNow) * 1000)
                    var poller = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&poller, 1, remaining)
                    // A signal (another test's child process exiting) interrupts the wait: wait on.
                    if ready < 0, errno == EINTR { continue }
                    if ready <= 0 {
                        return continuation.resume(returning: (String(decoding: received, as: UTF8.self), false))
                    }
                    let count = recv(self.descriptor, &buffer, buffer.count, 0)
                    if count < 0, errno == EINTR { continue }
                    if count <= 0 {
                        return continuation.resume(returning: (String(decoding: received, as: UTF8.self), true))
                    }
                    received += buffer[0..<count]
                }
            }
        }
    }

    /// One HTTP/1.1 response read off a kept-alive connection.
    package struct Response {
        package let status: Int
        /// Header lines as sent, each `name: value` with the name lowercased.
        package let headers: [String]
        package let body: String
    }

    /// Reads `count` whole responses (each framed by its `Content-Length`), in the order they came;
    /// fewer when the connection closes or `seconds` pass first.
    package func readResponses(_ count: Int, within seconds: Double) async -> [Response] {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let end = Date().addingTimeInterval(seconds)
                var received: [UInt8] = []
                var responses: [Response] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while responses.count < count {
                    if let (response, used) = Self.response(in: received) {
                        responses.append(response)
                        received.removeFirst(used)
                        continue
                    }
                    var poller = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&poller, 1, Int32(max(0, end.timeIntervalSinceNow) * 1000))
                    if ready < 0, errno == EINTR { continue }
                    guard ready > 0 else { break }
                    let read = recv(self.descriptor, &buffer, buffer.count, 0)
                    if read < 0, errno == EINTR { continue }
                    guard read > 0 else { break }
                    received += buffer[0..<read]
                }
                continuation.resume(returning: responses)
            }
        }
    }

    /// The first whole response in `bytes` and how many bytes it took.
    private static func response(in bytes: [UInt8]) -> (Response, Int)? {
        let separator = Array("\r\n\r\n".utf8)
        guard bytes.count >= 4,
            let headEnd = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator })
        else { return nil }
        let lines = String(decoding: bytes[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.dropFirst(9).prefix(3)) else { return nil }
        let headers = lines.dropFirst().map { line -> String in
            guard let colon = line.firstIndex(of: ":") else { return line.lowercased() }
            return line[..<colon].lowercased() + line[colon...]
        }
        let length =
            headers.first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        let bodyStart = headEnd + 4
        guard bytes.count >= bodyStart + length else { return nil }
        let body = String(decoding: bytes[bodyStart..<(bodyStart + length)], as: UTF8.self)
        return (Response(status: status, headers: headers, body: body), bodyStart + length)
    }

    /// Reads until `text` has arrived (or the connection closes, or `seconds` pass).
    package func read(until text: String, within seconds: Double) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let end = Date().addingTimeInterval(seconds)
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                // Only the bytes that came last can complete `text`: long streams are read in linear time.
                var searched = 0
                while !String(decoding: received[max(0, searched - text.utf8.count)...], as: UTF8.self).contains(text) {
                    searched = received.count
                    var poller = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&poller, 1, Int32(max(0, end.timeIntervalSinceNow) * 1000))
                    if ready < 0, errno == EINTR { continue }
                    guard ready > 0 else { break }
                    let count = recv(self.descriptor, &buffer, buffer.count, 0)
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { break }
                    received += buffer[0..<count]
                }
                continuation.resume(returning: String(decoding: received, as: UTF8.self))
            }
        }
    }

    /// One HTTP/1.1 request on a fresh connection (`Connection: close`): the status and the body.
    /// For tests that must not depend on FoundationNetworking (whose cancellation can hang).
    package static func exchange(
        port: Int, method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [],
        within seconds: Double = 30
    ) async throws -> (status: Int, body: Data) {
        let connection = try await offPool { try RawConnection(port: port) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        guard connection.send(head), connection.send(bytes: body) else {
            throw ExchangeFailure(
                description: "\(method) \(path): the server closed the connection before the request was sent")
        }
        let (text, closed) = await connection.readUntilClosed(within: seconds)
        guard closed, let split = text.range(of: "\r\n\r\n"), text.hasPrefix("HTTP/1.1 "),
            let status = Int(text.dropFirst(9).prefix(3))
        else {
            throw ExchangeFailure(
                description: "\(method) \(path): "
                    + (closed
                        ? "the connection closed after \(text.utf8.count) bytes, no whole response: \(text.prefix(200))"
                        : "no whole response within \(seconds) s (\(text.utf8.count) bytes)"))
        }
        return (status, Data(text[split.upperBound...].utf8))
    }

    /// Why ``exchange(port:method:path:headers:body:within:)`` has no response: what arrived and how
    /// it ended, so a failure says whether the server reset the connection, closed it early or said
    /// nothing in time.
    package struct ExchangeFailure: Error, CustomStringConvertible {
        package let description: String
    }

    /// One complete request and its response on a fresh connection (`Connection: close`).
    package static func request(port: Int, _ text: String, within seconds: Double = 10) async throws -> String {
        let connection = try await offPool { try RawConnection(port: port) }
        connection.send(text)
        return await connection.readUntilClosed(within: seconds).text
    }
}

/// A real server on a free port (in process), for tests that need sockets.
package struct LiveServer {
    package let port: Int
    package let registry: PrometheusCollectorRegistry
    package let notifier: ChangeNotifier
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    package static func start(
        store: any SyncStore, configuration: ServerConfiguration = ServerConfiguration(),
        logger: Logger = Logger(label: "live-server-test"),
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) async throws -> LiveServer {
        let registry = PrometheusCollectorRegistry()
        let notifier = ChangeNotifier()
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let dependencies = ServerDependencies(
            store: store, notifier: notifier, registry: registry, now: now, logger: logger,
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) })
        let app = buildApplication(configuration: configuration.onAnyPort, dependencies: dependencies)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        return LiveServer(port: port, registry: registry, notifier: notifier, group: group, task: task)
    }

    package func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// The value of a metric line at `/metrics` (`name` with its labels, as the registry prints it).
    package func metric(_ name: String) -> Double? {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        let text = String(decoding: buffer, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    /// `GET /health` on a fresh connection; whether it answered 200.
    package func healthy(within seconds: Double = 10) async -> Bool {
        let response = try? await RawConnection.request(
            port: port, "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", within: seconds)
        return response?.hasPrefix("HTTP/1.1 200") == true
    }
}

/// `send(2)` without SIGPIPE (the method named `send` above hides the C function).
private func posixSend(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        return send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
    #else
        return send(descriptor, bytes, count, 0)
    #endif
}
