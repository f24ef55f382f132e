import ArgumentParser
import Foundation
import GRDB
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// What a request costs a server written straight on SwiftNIO, below any framework: HTTP/1.1
/// codecs and one handler that answers on the event loop, no task. With `--write`, each request
/// (a 175-byte `POST`, a push's size) is first made durable the way the server's pushes are: a
/// transaction on GRDB's writer queue (requests that arrive meanwhile share the next one, as
/// `GroupCommit` does), the answer written from the event loop once it has committed. Driven like
/// `request-floor`. The floor under a push answered below Hummingbird (docs/benchmark-history.md, eleventh round).
struct NIOFloor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "nio-floor")
    @Option var port = 18_087
    @Option(help: "Concurrent connections.") var devices = 8
    @Option(help: "Requests in all.") var total = 80_000
    @Flag(help: "Make each request durable (a group-committed SQLite transaction) before answering.")
    var write = false

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tipsync-bench-nio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let commits: Commits? = write ? try await Commits(path: directory.appendingPathComponent("f.sqlite").path) : nil
        let group = MultiThreadedEventLoopGroup.singleton
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                    try channel.pipeline.syncOperations.addHandler(Answer(commits: commits))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        let (requests, seconds, serverCPU) = try await FloorMeasurement.drive(
            port: port, devices: devices, perDevice: total / devices, method: "POST", path: "/",
            body: Array(repeating: UInt8(ascii: "x"), count: 175))
        try await server.close()
        print(
            "nio-floor \(write ? "durable POST" : "POST") devices=\(devices) requests=\(requests): "
                + "\(format(seconds, 2)) s, \(Int(Double(requests) / seconds)) requests/s; server CPU "
                + "\(format(serverCPU / Double(requests) * 1_000_000, 1)) µs per request")
    }

    /// Answers each request on its event loop, after its commit with `commits`.
    final class Answer: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let commits: Commits?
        init(commits: Commits?) { self.commits = commits }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            guard let commits else { return Self.answer(context) }
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let loop = context.eventLoop
            commits.commit { loop.execute { Self.answer(bound.value) } }
        }

        static func answer(_ context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "2")
            headers.add(name: "Content-Type", value: "application/json")
            context.write(
                NIOAny(HTTPServerResponsePart.head(.init(version: .http1_1, status: .ok, headers: headers))),
                promise: nil)
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: "{}")))), promise: nil)
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
        }
    }

    /// Group commit onto GRDB's writer queue, each waiting write one row and a counter's move.
    final class Commits: Sendable {
        let pool: DatabasePool
        let state = Mutex<(waiting: [@Sendable () -> Void], writing: Bool, next: Int)>(([], false, 0))

        init(path: String) async throws {
            pool = try await FloorMeasurement.database(at: path)
        }

        func commit(_ done: @escaping @Sendable () -> Void) {
            let starts = state.withLock { state in
                state.waiting.append(done)
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            if starts { schedule() }
        }

        private func schedule() {
            pool.asyncWriteWithoutTransaction { db in
                let (group, first) = self.state.withLock { state in
                    let group = state.waiting
                    state.waiting = []
                    let first = state.next
                    state.next += group.count
                    return (group, first)
                }
                let body = String(repeating: "x", count: 160)
                try? db.inTransaction {
                    for n in first..<(first + group.count) {
                        try db.cachedStatement(sql: "UPDATE counter SET next = ? WHERE id = 1").execute(arguments: [n])
                        try db.cachedStatement(
                            sql:
                                "INSERT INTO change (account, position, device, seq, hlc, kind, body) VALUES (1, ?, 'd', ?, ?, 'donation', ?)"
                        ).execute(arguments: [n, n, n, body])
                    }
                    return .commit
                }
                for done in group { done() }
                let more = self.state.withLock { state in
                    state.writing = !state.waiting.isEmpty
                    return state.writing
                }
                if more { self.schedule() }
            }
        }
    }
}
