import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

/// A device offline for a while with large parameter values (issue 72, item 6): its outbox of 10 MB
/// goes in pushes of at most 1 MiB (protocol.md §7) and drains through a server with default
/// settings, waiting each `Retry-After` of the body budget. Before, one push of 500 such changes was
/// answered `413` and the client stopped; and a push larger than a second of budget, retried after
/// its `Retry-After`, was refused again every time.
@Suite struct LargeOutboxTests {
    /// The server's clock, moved by the client's waits: the budget refills as the client waits.
    final class ServerTime: Sendable {
        let milliseconds = Mutex(Int64(Date().timeIntervalSince1970 * 1000))
        var now: Int64 { milliseconds.withLock { $0 } }
        func advance(by duration: Duration) {
            milliseconds.withLock {
                $0 += duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
            }
        }
    }

    @Test func aTenMegabyteOutboxDrainsThroughDefaultSettings() async throws {
        let fixture = try await ServerFixture.make()
        let time = ServerTime()
        let phone = try makeDevice("phone")
        try phone.load(catalog: try Catalog(validating: Array(#"{"parameters":[{"id":"note","default":""}]}"#.utf8)))
        let value = String(repeating: "é", count: 30_000)  // 60,000 bytes of UTF-8
        for index in 0..<170 { try phone.setParameter("note", to: .string("\(index):\(value)")) }
        try await fixture.app(configuration: .test, now: { time.now }).test(.live) { server in
            let port = try #require(server.port)
            let configuration = SyncConfiguration(
                server: URL(string: "http://127.0.0.1:\(port)")!, token: fixture.tokens["phone"]!)
            let waits = Mutex<[Duration]>([])
            let client = SyncClient(
                replica: phone, configuration: configuration,
                sleep: { duration in
                    waits.withLock { $0.append(duration) }
                    time.advance(by: duration)
                })
            try await client.pushPending()
            #expect(try phone.syncProgress.pushedSeq == 170)
            #expect(try await fixture.store.highestSeq(account: fixture.accountID, device: "phone") == 170)
            // The body budget (8 MiB at once, then 1 MiB a second) made it wait: about two seconds
            // of Retry-After in all, each wait at least a second.
            let waited = waits.withLock { $0 }
            #expect(!waited.isEmpty && waited.allSatisfy { $0 >= .seconds(1) })
        }
    }
}
