import ArgumentParser
import Foundation
import TipSync
import TipSyncCore

/// How long one single-change push takes, end to end, by the way it is sent: over a plain
/// keep-alive socket (the server's own time plus loopback), through ``URLSessionTransport`` (what
/// the Swift client and the agent use), and as ``SyncClient/push()`` after a local change (the
/// client's bookkeeping in its replica included). Sequential pushes of one device; p50, p99, max.
struct PushLatency: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-latency", abstract: "Latency of one single-change push: socket, URLSession, SyncClient.")
    @Option var port = 18_083
    @Option var pushes = 1000

    func run() async throws {
        let server = try await BenchServer.start(port: port)
        defer { server.stop() }
        let tokens = try await server.account("latency", devices: ["socket", "session", "client"])
        @Sendable func body(_ device: String, _ seq: Int) -> Data {
            let change = Change(
                device: device, seq: Int64(seq),
                hlc: HLC(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000), counter: 0),
                operation: mixedOperation(seq, device: device))
            return (try? JSONCoding.encoder.encode(PushRequest(changes: [change]))) ?? Data()
        }
        func summary(_ name: String, _ measurement: Measurement) {
            print(
                "push-latency \(name) pushes=\(pushes): p50 \(format(measurement.percentile(0.5).milliseconds, 2)) ms, "
                    + "p99 \(format(measurement.percentile(0.99).milliseconds, 2)) ms, "
                    + "max \(format(measurement.percentile(1).milliseconds, 2)) ms")
        }

        let pushes = pushes
        let port = port
        let socketToken = tokens["socket"]!
        let socketSamples = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<Measurement, any Error>) in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        let connection = try HTTPConnection(port: port)
                        var measurement = Measurement()
                        for seq in 1...pushes {
                            let bytes = Array(body("socket", seq))
                            try measurement.time {
                                let (status, _, _, _) = try connection.exchange(
                                    "POST", "/v1/push",
                                    headers: [
                                        "Authorization: Bearer \(socketToken)", "Content-Type: application/json",
                                    ],
                                    body: bytes)
                                guard status == 200 else { throw BenchError("push answered \(status)") }
                            }
                        }
                        return measurement
                    })
            }
        }
        summary("socket", socketSamples)

        let transport = URLSessionTransport(baseURL: server.url)
        var session = Measurement()
        for seq in 1...pushes {
            let request = SyncHTTPRequest(
                method: "POST", path: "/v1/push",
                headers: ["Authorization": "Bearer \(tokens["session"]!)", "Content-Type": "application/json"],
                body: body("session", seq))
            try await session.timeAsync {
                let response = try await transport.send(request)
                guard response.status == 200 else { throw BenchError("push answered \(response.status)") }
            }
        }
        summary("urlsession", session)

        let replica = try TipsReplica(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent(
                "tipsync-bench-\(UUID().uuidString)"),
            deviceID: "client")
        let client = SyncClient(
            replica: replica, configuration: SyncConfiguration(server: server.url, token: tokens["client"]!))
        try await client.syncOnce()
        var local = Measurement()
        var pushed = Measurement()
        for seq in 1...pushes {
            try local.time { try replica.donate(event: "e\(seq % 20)") }
            try await pushed.timeAsync { try await client.push() }
        }
        summary("local-change", local)
        summary("sync-client", pushed)
    }
}
