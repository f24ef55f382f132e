import ArgumentParser
import CompressNIO
import Foundation
import NIOCore
import TipSyncCore
import TipSyncServer

#if canImport(Glibc)
    import CNIOLinux  // the socket constants (SOCK_STREAM), as LoadTest.swift reads them
    import Glibc
#endif

/// Bytes on the wire per change, HTTP framing included: a new device pulling the whole log page by
/// page, and a device pushing it in batches, each plain and compressed (`Accept-Encoding: gzip`,
/// `Content-Encoding: gzip`). The workload is issue 14's: 80% donations, 15% parameter sets, 5%
/// invalidations.
struct WireBytes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wire-bytes", abstract: "Bytes per change on the wire for pulls and batched pushes.")

    @Option(help: "Changes in the log.") var changes = 100_000
    @Option(help: "Changes per pull page and per push batch.") var page = 1000
    @Option var port = 18_470

    func run() async throws {
        let server = try await BenchServer.start(port: port)
        defer { server.stop() }
        let tokens = try await server.account("wire", devices: ["phone", "laptop"])
        let all = (1...changes).map { Self.change(seq: Int64($0)) }
        var pushed: [String: Int] = [:]
        for gzip in [false, true] {
            // Plain pushes store the log; compressed ones resend it (duplicates, same bytes).
            let connection = try HTTPConnection(port: port)
            var total = 0
            for start in stride(from: 0, to: all.count, by: page) {
                var body = ByteBuffer(
                    bytes: try JSONCoding.encoder.encode(
                        PushRequest(changes: Array(all[start..<min(start + page, all.count)]))))
                var headers = ["Authorization: Bearer \(tokens["phone"]!)", "Content-Type: application/json"]
                if gzip {
                    body = try body.compress(with: .gzip())
                    headers.append("Content-Encoding: gzip")
                }
                let (status, sent, received, _) = try connection.exchange(
                    "POST", "/v1/push", headers: headers, body: Array(body.readableBytesView))
                guard status == 200 else { throw BenchError("push answered \(status)") }
                total += sent + received
            }
            pushed[gzip ? "gzip" : "plain"] = total
        }
        for gzip in [false, true] {
            let connection = try HTTPConnection(port: port)
            var cursor: String?
            var total = 0
            var received = 0
            while true {
                let path = "/v1/pull?limit=\(page)" + (cursor.map { "&cursor=\($0)" } ?? "")
                var headers = ["Authorization: Bearer \(tokens["laptop"]!)"]
                if gzip { headers.append("Accept-Encoding: gzip") }
                let (status, sent, got, body) = try connection.exchange("GET", path, headers: headers, body: [])
                guard status == 200 else { throw BenchError("pull answered \(status)") }
                total += sent + got
                var buffer = ByteBuffer(bytes: body)
                let json = gzip ? try buffer.decompress(with: .gzip()) : buffer
                let pageResponse = try JSONCoding.decode(PullResponse.self, from: json.readableBytesView)
                received += pageResponse.changes.count
                cursor = pageResponse.cursor
                if !pageResponse.more { break }
            }
            guard received == changes else { throw BenchError("pulled \(received) of \(changes)") }
            print(
                "pull \(gzip ? "gzip " : "plain"): \(total) bytes for \(changes) changes = "
                    + "\(format(Double(total) / Double(changes), 1)) B/change (pages of \(page))")
        }
        for kind in ["plain", "gzip"] {
            let total = pushed[kind]!
            print(
                "push \(kind == "gzip" ? "gzip " : "plain"): \(total) bytes for \(changes) changes = "
                    + "\(format(Double(total) / Double(changes), 1)) B/change (batches of \(page), both directions)")
        }
    }

    /// Issue 14's mix: 80% donations, 15% parameter sets, 5% invalidations.
    static func change(seq: Int64) -> Change {
        let hlc = HLC(milliseconds: 1_790_000_000_000 + UInt64(seq) * 7, counter: 0)
        let operation: Change.Operation =
            switch seq % 20 {
            case 0:
                .eligibility(tip: "tip-\(seq % 40)", state: .invalidated(seq % 3 == 0 ? .actionPerformed : .tipClosed))
            case 1, 2, 3: .parameter(id: "param-\(seq % 25)", value: .int(seq))
            default:
                .donation(
                    event: "event-\(seq % 10)", id: "phone:\(seq)", date: 1_790_000_000_000 + seq * 7,
                    info: seq % 4 == 0 ? .object(["screen": .string("detail")]) : nil)
            }
        return Change(device: "phone", seq: seq, hlc: hlc, operation: operation)
    }
}

/// One keep-alive HTTP/1.1 connection that counts every byte each way.
final class HTTPConnection {
    private let descriptor: Int32
    private var pending: [UInt8] = []

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw BenchError("cannot connect to port \(port)") }
    }

    deinit { close(descriptor) }

    /// Sends one request; the status, bytes sent, bytes received (head and body) and the body.
    func exchange(_ method: String, _ path: String, headers: [String], body: [UInt8]) throws
        -> (status: Int, sent: Int, received: Int, body: [UInt8])
    {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for header in headers { head += header + "\r\n" }
        if method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        var offset = 0
        while offset < request.count {
            let written = request[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard written > 0 else { throw BenchError("send failed") }
            offset += written
        }
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = pending.firstRange(of: separator)?.upperBound
            if headEnd == nil { try fill() }
        }
        let headText = String(decoding: pending[..<headEnd!], as: UTF8.self)
        let status = Int(headText.dropFirst(9).prefix(3)) ?? 0
        let length =
            headText.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        while pending.count < headEnd! + length { try fill() }
        let responseBody = Array(pending[headEnd!..<(headEnd! + length)])
        pending.removeFirst(headEnd! + length)
        return (status, request.count, headEnd! + length, responseBody)
    }

    private func fill() throws {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { throw BenchError("connection closed") }
        pending += buffer[0..<count]
    }
}
