import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

/// The pull pipeline (``SyncConfiguration/prefetchPages``: while page n merges, n+1 decodes and
/// n+2 is requested) over a real server: every page arrives once and in order, the replica ends with
/// the whole log, and a local change made while prefetched pages are in flight reaches the server
/// with no further change.
@Suite struct PipelinedPullTests {
    /// URLSession, plus a hook on the answers: `onAnswer` sees each request and its status.
    struct WatchedTransport: SyncTransport {
        let inner: URLSessionTransport
        let onAnswer: @Sendable (SyncHTTPRequest, Int) -> Void

        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            let response = try await inner.send(request)
            onAnswer(request, response.status)
            return response
        }

        func stream(_ request: SyncHTTPRequest) async throws -> SyncHTTPStream? { nil }
    }

    @Test(.timeLimit(.minutes(5))) func aLocalChangeDuringAPipelinedPullIsPushedAndEveryPageArrives() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let url = URL(string: "http://127.0.0.1:\(try #require(server.port))")!
            try phone.donate(event: "opened", infos: (0..<57).map { .int(Int64($0)) })
            try await SyncClient(
                replica: phone, configuration: SyncConfiguration(server: url, token: fixture.tokens["phone"]!)
            )
            .syncOnce()

            // The laptop pulls pages of 4 (15 pages). At the third pull answer, with the pages
            // after it requested ahead, it makes a change of its own.
            let pulls = Mutex(0)
            let (pushed, pushedContinuation) = AsyncStream<Void>.makeStream()
            let changed = Mutex(false)
            let transport = WatchedTransport(inner: URLSessionTransport(baseURL: url)) { request, status in
                if request.path.hasPrefix("/v1/pull"), !request.path.contains("wait=") {
                    let count = pulls.withLock { count in
                        count += 1
                        return count
                    }
                    if count == 3 {
                        #expect(throws: Never.self) { try laptop.invalidate(tip: "welcome", reason: .tipClosed) }
                        changed.withLock { $0 = true }
                    }
                }
                if request.path == "/v1/push", status == 200, changed.withLock({ $0 }) { pushedContinuation.yield() }
            }
            var configuration = SyncConfiguration(server: url, token: fixture.tokens["laptop"]!)
            configuration.pullLimit = 4
            configuration.longPollSeconds = 5
            configuration.liveStream = false
            let client = SyncClient(replica: laptop, configuration: configuration, transport: transport)
            // A loop that ends (it throws what it cannot retry) fails the test at once, naming why.
            let running = Task {
                do {
                    try await client.run()
                } catch {
                    if !Task.isCancelled { Issue.record(error, "run() ended") }
                }
                pushedContinuation.finish()
            }
            defer { running.cancel() }
            // Waits for a push after the change, not for time (the time limit turns a stranded change into a failure).
            for await _ in pushed {
                if try await fixture.store.highestSeq(account: fixture.accountID, device: "laptop") == 1 { break }
            }
            #expect(try await fixture.store.highestSeq(account: fixture.accountID, device: "laptop") == 1)
            #expect(pulls.withLock { $0 } >= 15)
            let held = laptop.state.events["opened"]?.donations.map(\.info) ?? []
            #expect(held.count == 57)
            #expect(Set(held) == Set((0..<57).map { JSONValue.int(Int64($0)) }))
        }
    }
}
