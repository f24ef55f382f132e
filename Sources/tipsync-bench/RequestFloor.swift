import ArgumentParser
import Foundation
import Hummingbird
import Logging
import TipSyncServer

/// The server CPU a request costs before any route does work: `GET /health` on `tipsync-server`
/// (every global middleware, the router, a constant answer) and `GET /` on a Hummingbird app with
/// one route and no middleware (the framework and the transport alone). Driven like `push-ingest`:
/// each device is a thread of its own sending requests one after the other over one keep-alive
/// connection, and the threads' CPU is subtracted from the process's. What a single-change push
/// costs above these is the push's own work (authentication, JSON, the write, the answer).
struct RequestFloor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "request-floor")
    @Option var port = 18_086
    @Option(help: "Concurrent connections.") var devices = 8
    @Option(help: "Requests in all.") var total = 80_000
    @Flag(help: "A one-route Hummingbird app instead of tipsync-server's /health.") var bare = false

    func run() async throws {
        let path: String
        let stop: @Sendable () -> Void
        if bare {
            EventLoopCount.apply()  // the same loops as the server it is compared with
            let router = Router()
            router.get("/") { _, _ in "ok" }
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                logger: .init(label: "bare"))
            let task = Task { try await app.runService() }
            stop = { task.cancel() }
            path = "/"
            try await Self.waitUntilAnswering(port: port, path: path)
        } else {
            let server = try await BenchServer.start(port: port)
            stop = { server.stop() }
            path = "/health"
        }
        defer { stop() }
        let (requests, seconds, serverCPU) = try await FloorMeasurement.drive(
            port: port, devices: devices, perDevice: total / devices, method: "GET", path: path)
        print(
            "request-floor \(bare ? "bare Hummingbird GET /" : "tipsync-server GET /health") devices=\(devices) requests=\(requests): "
                + "\(format(seconds, 2)) s, \(Int(Double(requests) / seconds)) requests/s; server CPU "
                + "\(format(serverCPU / Double(requests) * 1_000_000, 1)) µs per request")
    }

    /// Polls until the bare app answers (a benchmark may poll for readiness; tests never do).
    static func waitUntilAnswering(port: Int, path: String) async throws {
        for _ in 0..<500 {
            if let connection = try? HTTPConnection(port: port),
                (try? connection.exchange("GET", path, headers: [], body: []))?.status == 200
            {
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError("the bare app did not start on port \(port)")
    }
}
