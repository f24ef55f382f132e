import Foundation
import Synchronization
import Testing
import TipSync
import TipSyncCore

/// How a device comes back after a failure (protocol.md §17.3): a device that was live reopens its
/// stream at its cursor — one request, plus a push only when its outbox holds something — and its
/// failures in a row start again from 0 only once it is live again (`event: ready` with its outbox
/// pushed), not when a pull succeeds beside streams that fail.
@Suite struct ReconnectTests {
    /// How each live stream the server opens behaves, in turn (the last again once they run out).
    enum StreamScript: Sendable {
        /// Refused before it begins (`503`).
        case refused
        /// `event: ready`, then the connection is cut (a crash): a failure.
        case readyThenCut
        /// `event: ready`, then open until the client goes.
        case readyThenOpen
    }

    /// A server that answers the device check, the account, pulls and pushes, and opens streams as
    /// scripted; it records every request.
    final class StreamServer: SyncTransport {
        let streams: [StreamScript]
        let requests = Mutex<[String]>([])
        /// Called after each request is recorded, with every request so far.
        let onRequest = Mutex<(@Sendable ([String]) -> Void)?>(nil)
        private let opened = Mutex(0)
        private let held = Mutex<[AsyncThrowingStream<Data, any Error>.Continuation]>([])

        /// `ready`'s `catalog` member, as JSON.
        let readyCatalog: String

        init(streams: [StreamScript], readyCatalog: String = "null") {
            self.streams = streams
            self.readyCatalog = readyCatalog
        }

        func paths() -> [String] { requests.withLock { $0.map { String($0.prefix { $0 != "?" }) } } }

        func record(_ request: SyncHTTPRequest) {
            let all = requests.withLock { requests in
                requests.append("\(request.method) \(request.path)")
                return requests
            }
            onRequest.withLock { $0 }?(all)
        }

        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            record(request)
            let path = String(request.path.prefix { $0 != "?" })
            let json: String =
                switch path {
                case "/v1/devices/phone": #"{"device":"phone","highestSeq":0,"serverTime":1700000000000}"#
                case "/v1/account": #"{"account":"alice","device":"phone","serverTime":1700000000000}"#
                case "/v1/pull":
                    #"{"changes":[],"cursor":"g.1","more":false,"snapshot":false,"serverTime":1700000000000,"highestSeq":0,"generation":"g"}"#
                case "/v1/catalog": #"{"tips":[{"id":"uploaded","title":"Uploaded while it was away"}]}"#
                case "/v1/push":
                    #"{"accepted":1,"duplicates":0,"generation":"g","highestSeq":1,"serverTime":1700000000000}"#
                default: #"{"error":{"code":"not_found","message":"no such route"}}"#
                }
            return SyncHTTPResponse(
                status: path.hasPrefix("/v1/") && !json.contains("not_found") ? 200 : 404, body: Data(json.utf8),
                headers: ["content-type": "application/json", "etag": #""v2""#])
        }

        func stream(_ request: SyncHTTPRequest) async throws -> SyncHTTPStream? {
            record(request)
            let index = opened.withLock { count in
                defer { count += 1 }
                return count
            }
            let ready = Data("event: ready\ndata: {\"cursor\":\"g.1\",\"catalog\":\(readyCatalog)}\n\n".utf8)
            switch streams[min(index, streams.count - 1)] {
            case .refused:
                let body = Data(#"{"error":{"code":"unavailable","message":"starting"}}"#.utf8)
                return SyncHTTPStream(
                    status: 503,
                    body: AsyncThrowingStream {
                        $0.yield(body)
                        $0.finish()
                    })
            case .readyThenCut:
                return SyncHTTPStream(
                    status: 200,
                    body: AsyncThrowingStream {
                        $0.yield(ready)
                        $0.finish(throwing: URLError(.networkConnectionLost))
                    })
            case .readyThenOpen:
                let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
                continuation.yield(ready)
                held.withLock { $0.append(continuation) }
                return SyncHTTPStream(status: 200, body: body)
            }
        }
    }

    /// Runs a client against `server` until `stop` holds of the requests sent and the waits after
    /// failures so far (full draws: each wait is its range's top, in seconds); `onWait` is told of
    /// each wait as it begins. Returns the waits.
    static func run(
        _ server: StreamServer, replica: TipsReplica, followsCatalog: Bool = false,
        onWait: @escaping @Sendable (Int) -> Void = { _ in },
        onStatus: @escaping @Sendable (SyncStatus) -> Void = { _ in },
        stop: @escaping @Sendable ([String], [Double]) -> Bool
    ) async throws -> [Double] {
        var configuration = SyncConfiguration(server: URL(string: "http://tipsync.invalid")!, token: "t")
        configuration.onStatusChange = { _, status in onStatus(status) }
        configuration.followsServerCatalog = followsCatalog
        configuration.liveStreamSilence = 100_000
        configuration.compressPushes = false
        let recorded = Mutex<[Double]>([])
        let (done, finish) = AsyncStream<Void>.makeStream()
        server.onRequest.withLock {
            $0 = { requests in if stop(requests, recorded.withLock { $0 }) { finish.yield() } }
        }
        let client = SyncClient(
            replica: replica, configuration: configuration, transport: server,
            sleep: { duration in
                let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
                // The silence watchdog's wait never passes here.
                if seconds >= 100_000 { try await Task.sleep(for: .seconds(86_400)) }
                let waits = recorded.withLock { waits in
                    waits.append(seconds)
                    return waits
                }
                onWait(waits.count)
                if stop(server.requests.withLock { $0 }, waits) { finish.yield() }
            },
            jitter: { 1 })
        let running = Task { try await client.run() }
        for await _ in done { break }
        running.cancel()
        _ = try? await running.value
        return recorded.withLock { $0 }
    }

    @Test func aDeviceThatWasLiveComesBackWithOneRequest() async throws {
        let replica = try makeReplica("phone")
        let server = StreamServer(streams: [.readyThenCut, .readyThenCut, .readyThenOpen])
        _ = try await Self.run(server, replica: replica) { requests, _ in requests.count == 6 }
        let paths = server.paths()
        // The first launch's round, then one stream request per cut: no push (nothing to send), no pull.
        #expect(
            paths == [
                "GET /v1/devices/phone", "GET /v1/account", "GET /v1/pull", "GET /v1/live", "GET /v1/live",
                "GET /v1/live",
            ])
    }

    @Test func aChangeMadeDuringTheOutageIsTheOnlyPush() async throws {
        let replica = try makeReplica("phone")
        let server = StreamServer(streams: [.readyThenCut, .readyThenOpen])
        // While the device is cut off, the app records something.
        _ = try await Self.run(
            server, replica: replica, onWait: { _ in try? replica.donate(event: "opened") },
            stop: { requests, _ in requests.count == 6 })
        let first = ["GET /v1/devices/phone", "GET /v1/account", "GET /v1/pull", "GET /v1/live"]
        // Back: the push and the stream, in either order, and nothing else.
        #expect(Array(server.paths().prefix(4)) == first)
        #expect(Set(server.paths().dropFirst(4)) == ["POST /v1/push", "GET /v1/live"])
        #expect(try replica.syncProgress.pushedSeq == 1)
    }

    @Test func failuresStartAgainOnlyOnceAStreamIsReady() async throws {
        let replica = try makeReplica("phone")
        // Pulls succeed; four streams are refused before they begin, then one begins and is cut.
        let server = StreamServer(streams: [.refused, .refused, .refused, .refused, .readyThenCut, .refused])
        let waits = try await Self.run(server, replica: replica) { _, waits in waits.count == 6 }
        // Full draws: 1, 1, 2, 4 s while it is not live; once `ready` came, 1 s again, then 1 s.
        #expect(waits == [1, 1, 2, 4, 1, 1])
        // And it came back by streams alone: the one pull of its first round.
        #expect(server.paths().filter { $0 == "GET /v1/pull" }.count == 1)
    }

    /// A failure is one status that says when the next attempt is: before, the status first said
    /// `refused` with no next attempt (or, after an earlier failure, that one's, already past), and
    /// only then the new one — a status that claimed what was not so, and twice the work per failure.
    @Test func eachFailureIsOneStatusWithItsOwnNextAttempt() async throws {
        let clock = ManualClock()
        let replica = try makeReplica("phone", clock: clock)
        let server = StreamServer(streams: [.refused, .refused, .refused, .readyThenOpen])
        let statuses = Mutex<[SyncStatus]>([])
        let waits = try await Self.run(
            server, replica: replica,
            onWait: { _ in clock.advance(by: 10) },  // each wait moves the device's clock on
            onStatus: { status in statuses.withLock { $0.append(status) } },
            stop: { requests, _ in requests.filter { $0.hasPrefix("GET /v1/live") }.count == 4 })
        // (A fourth wait may follow the test's cancelling of the last stream.)
        #expect(waits.prefix(3) == [1, 1, 2])
        // Between the first round's `connected` and the stream's: the three failures, one status each.
        let all = statuses.withLock { $0 }
        let live = all.indices.filter { all[$0].state == .connected }
        try #require(live.count >= 2)
        let between = all[(live[0] + 1)..<live[1]]
        #expect(between.allSatisfy { $0.state == .refused }, "\(between.map(\.state))")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        // The first at the start, then each 10 s later (the waits before it), plus its own wait.
        #expect(
            between.map(\.nextAttemptAt) == [
                start.addingTimeInterval(1), start.addingTimeInterval(11), start.addingTimeInterval(22),
            ], "\(between.map(\.nextAttemptAt))")
        #expect(all[live[1]].nextAttemptAt == nil && all[live[1]].lastError == nil)
    }

    @Test func readyNamesACatalogUploadedWhileTheDeviceWasAway() async throws {
        let replica = try makeReplica("phone")
        // The device reconnects without a pull; `ready` names a catalog version it has not applied.
        let server = StreamServer(streams: [.readyThenCut, .readyThenOpen], readyCatalog: #""\"v2\"""#)
        _ = try await Self.run(server, replica: replica, followsCatalog: true) { requests, _ in
            requests.filter { $0.hasPrefix("GET /v1/catalog") }.count == 1 && requests.count >= 6
        }
        #expect(try replica.serverCatalogTag == #""v2""#)
        #expect(replica.status(ofTip: "uploaded") != nil)
    }
}
