import CompressNIO
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncDeviceService
import TipSyncServerTestSupport

@testable import TipSyncServer

/// A device offline for a while with large parameter values (issue 72, item 6): its outbox of 10 MB
/// goes in pushes of at most 1 MiB (protocol.md §7) and drains through a server with default
/// settings, waiting each `Retry-After` of the body budget. Before, one push of 500 such changes was
/// answered `413` and the client stopped; and a push larger than a second of budget, retried after
/// its `Retry-After`, was refused again every time.
///
/// Each push may wait for its answer longer than an everyday request: the server parses a body this
/// large last when it is busy (``CostlyWork``). Under CI's load, on the one lowest-priority thread
/// every server of the test process shares, a 1 MiB push went unanswered for 30 s and the client gave
/// it up. This server has a lane of its own at the usual priority: the lane's priority is
/// ``CostlyWorkTests``' subject, the client's draining this one's.
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
        var dependencies = ServerDependencies(store: fixture.store, now: { time.now })
        dependencies.costlyWork = CostlyWork(lowestPriority: false)
        let app = buildApplication(configuration: ServerConfiguration.test.onAnyPort, dependencies: dependencies)
        try await app.test(.live) { server in
            let port = try #require(server.port)
            let url = URL(string: "http://127.0.0.1:\(port)")!
            let configuration = SyncConfiguration(server: url, token: fixture.tokens["phone"]!)
            let waits = Mutex<[Duration]>([])
            let transport = ClientPushCompressionTests.RecordingTransport(SyncClient.defaultTransport(url))
            let client = SyncClient(
                replica: phone, configuration: configuration, transport: transport,
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
            // Each push waited for its answer 30 s plus a second per 16 KiB of its JSON (94 s for 1 MiB),
            // however small its gzip on the wire.
            let pushes = transport.sent.withLock { $0 }.filter { $0.path == "/v1/push" }
            #expect(pushes.count >= 10)
            for push in pushes {
                var wire = ByteBuffer(bytes: try #require(push.body))
                let json = try wire.decompress(with: .gzip()).readableBytes
                #expect(json > 900_000)
                #expect(push.timeout == 30 + Double(json / 16_384), "\(json) bytes, \(push.timeout) s")
            }
        }
    }
}
