import CompressNIO
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Prometheus
import Testing
import TipSync
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// A compacted account's state kept compressed for new devices (``KeptStatePage``, issue 58 item 4):
/// what a device receives is exactly what reading the log gives, the kept pages are used only while
/// they describe the log, and erasure takes them with it.
@Suite struct KeptStatePageTests {
    /// Plain parts and kept segments spliced into one gzip or zlib stream inflate, checksums and
    /// length checked, to the parts' bytes in order — empty parts, and a plain part longer than one
    /// stored block (65,535 bytes), included.
    @Test func splicedStreamsInflateToThePartsInOrder() throws {
        let texts = (0..<3).map { part in
            ByteBuffer(string: (0..<2000).map { #"{"n":\#($0),"part":\#(part)}"# }.joined(separator: ","))
        }
        let long = ByteBuffer(bytes: (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) })
        let parts: [BodyPart] = [
            .plain(ByteBuffer(string: #"{"head":["#)), .deflated(try #require(DeflatedSegment(compressing: texts[0]))),
            .plain(ByteBuffer()), .deflated(try #require(DeflatedSegment(compressing: texts[1]))),
            .plain(long), .deflated(try #require(DeflatedSegment(compressing: texts[2]))),
            .deflated(try #require(DeflatedSegment(compressing: ByteBuffer()))), .plain(ByteBuffer(string: "]}")),
        ]
        var expected = ByteBuffer()
        expected.writeString(#"{"head":["#)
        expected.writeImmutableBuffer(texts[0])
        expected.writeImmutableBuffer(texts[1])
        expected.writeImmutableBuffer(long)
        expected.writeImmutableBuffer(texts[2])
        expected.writeString("]}")
        for (format, algorithm) in [(ZlibFormat.gzip, CompressionAlgorithm.gzip()), (.zlib, .zlib())] {
            let stream = SplicedBody.make(parts, format: format)
            // The server's own strict reader: the trailer present and right, nothing after it.
            #expect(try StrictInflater.inflate(stream, format: format, limit: 1 << 24) == expected, "\(format)")
            var copy = stream
            #expect(try copy.decompress(with: algorithm) == expected, "\(format)")
            #expect(stream.readableBytes < long.readableBytes + texts.reduce(0) { $0 + $1.readableBytes } / 3)
        }
        // A checksum that does not match is what a reader sees if a part's were combined wrongly.
        var broken = SplicedBody.make(parts, format: .gzip)
        broken.setInteger(UInt8(0), at: broken.writerIndex - 8)
        #expect(throws: StrictInflater.Failure.self) {
            try StrictInflater.inflate(broken, format: .gzip, limit: 1 << 24)
        }
    }

    /// 3,000 donations of about 560 bytes over 60 events (none hidden for ever) and 500 parameter
    /// sets over 10 ids (all but 10 superseded): about 1.7 MB of state, three full pages and a
    /// partial one.
    static func history() -> [Change] {
        (1...3500).map { seq in
            let operation: Change.Operation =
                seq % 7 == 0
                ? .parameter(id: "p\(seq % 10)", value: .int(Int64(seq)))
                : .donation(
                    event: "e\(seq % 60)", id: "phone:\(seq)", date: 1_700_000_000_000 + Int64(seq),
                    info: .object(["note": .string(String(repeating: "tip \(seq % 9) ", count: 70))]))
            return change("phone", Int64(seq), operation, ms: 1_700_000_000_000 + UInt64(seq))
        }
    }

    static func filled() async throws -> ServerFixture {
        let fixture = try await ServerFixture.make()
        let history = history()
        for start in stride(from: 0, to: history.count, by: 1000) {
            _ = try await fixture.store.push(
                Array(history[start..<min(start + 1000, history.count)]),
                from: DeviceIdentity(accountID: fixture.accountID, device: "phone"))
        }
        return fixture
    }

    /// Every page a new device pulls, from no cursor until `more` is false, as it reads them.
    static func pages(
        _ client: some TestClientProtocol, _ fixture: ServerFixture, accept: String?, limit: Int = 5000
    ) async throws -> [PullResponse] {
        var pages: [PullResponse] = []
        var cursor: String?
        repeat {
            var headers = fixture.headers("laptop")
            if let accept { headers[.acceptEncoding] = accept }
            var uri = "/v1/pull?limit=\(limit)"
            if let cursor { uri += "&cursor=\(cursor)" }
            let page = try await client.execute(uri: uri, method: .get, headers: headers) { response in
                #expect(response.status == .ok)
                var body = response.body
                switch response.headers[.contentEncoding] {
                case "gzip": body = try body.decompress(with: .gzip())
                case "deflate": body = try body.decompress(with: .zlib())
                default: break
                }
                return try decode(PullResponse.self, body)
            }
            pages.append(page)
            cursor = page.cursor
        } while pages.last?.more == true
        return pages
    }

    /// What a page says, but the server's clock.
    static func same(_ a: [PullResponse], _ b: [PullResponse]) -> Bool {
        a.count == b.count
            && zip(a, b).allSatisfy { x, y in
                var y = y
                y.serverTime = x.serverTime
                return x == y
            }
    }

    @Test func aNewDeviceReceivesTheKeptStateExactlyAsTheLogReads() async throws {
        let fixture = try await Self.filled()
        let store = fixture.store
        let account = fixture.accountID
        // Nothing is kept before a compaction.
        #expect(
            try await store.pull(account: account, after: 0, limit: 5000, device: nil, confirming: nil, keptPages: true)
                .kept == nil)
        _ = try await LogCompactor(store: store).compact(account: account)
        let first = try await store.pull(
            account: account, after: 0, limit: 5000, device: nil, confirming: nil, keptPages: true)
        let kept = try #require(first.kept)
        #expect(first.changes.isEmpty && first.more && first.cursor == kept.last && first.count == kept.count)
        let kept3 = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM kept_state_page")
        }
        #expect(kept3 == 3)
        // Asked without kept pages, or with a limit that reads a smaller page, the log is read.
        #expect(try await store.pull(account: account, after: 0, limit: 5000, device: nil, confirming: nil).kept == nil)
        #expect(
            try await store.pull(account: account, after: 0, limit: 500, device: nil, confirming: nil, keptPages: true)
                .kept == nil)

        let app = buildApplication(
            configuration: .test,
            dependencies: ServerDependencies(store: store, registry: PrometheusCollectorRegistry()))
        try await app.test(.router) { client in
            let plain = try await Self.pages(client, fixture, accept: nil)
            #expect(plain.count == 4 && plain.flatMap(\.changes).count == 3010)
            for accept in ["gzip", "deflate"] {
                #expect(Self.same(try await Self.pages(client, fixture, accept: accept), plain), "\(accept)")
            }
            let (spliced, read) = (
                try await Self.pages(client, fixture, accept: "gzip", limit: 500),
                try await Self.pages(client, fixture, accept: nil, limit: 500)
            )
            #expect(Self.same(spliced, read))
            // Operators see it: the three full pages, once compressed each way; none for limit 500.
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(String(buffer: response.body).contains("\ntipsync_kept_state_pages_served_total 6\n"))
            }
        }
    }

    /// Real clients read the spliced answers: a new device syncing with the Swift client
    /// (AsyncHTTPClient, which asks for `deflate, gzip`) and one over URLSession end with the state
    /// of a device that replayed the history before the compaction.
    @Test func newDevicesOfRealClientsEndAsOneThatReplayedTheHistory() async throws {
        var fixture = try await Self.filled()
        for device in ["tablet", "watch"] {
            fixture.tokens[device] = try await CredentialIssuance(fixture.store).createToken(
                accountName: "alice", device: device)
        }
        let fixed = fixture
        let early = try makeDevice("laptop")
        let tablet = try makeDevice("tablet")
        let watch = try makeDevice("watch")
        try await fixed.app().test(.live) { server in
            let base = URL(string: "http://127.0.0.1:\(try #require(server.port))")!
            func configuration(_ device: String) -> SyncConfiguration {
                SyncConfiguration(server: base, token: fixed.tokens[device]!)
            }
            try await SyncClient(replica: early, configuration: configuration("laptop")).syncOnce()
            _ = try await LogCompactor(store: fixed.store).compact(account: fixed.accountID)
            #expect(
                try await fixed.store.pull(
                    account: fixed.accountID, after: 0, limit: 5000, device: nil, confirming: nil, keptPages: true
                ).kept != nil)
            try await SyncClient(replica: tablet, configuration: configuration("tablet")).syncOnce()
            var overURLSession = configuration("watch")
            overURLSession.transport = URLSessionTransport(baseURL: base)
            try await SyncClient(
                replica: watch, configuration: overURLSession, transport: URLSessionTransport(baseURL: base)
            ).syncOnce()
        }
        #expect(tablet.state == early.state)
        #expect(watch.state == early.state)
        #expect(tablet.state.events.values.reduce(0) { $0 + $1.donations.count } == 3000)
    }

    /// The kept bytes are what a compressed answer sends: a page whose kept changes are replaced
    /// shows the replacement (so the test above compared the kept path, not a re-read).
    @Test func theAnswerCarriesTheKeptBytes() async throws {
        let fixture = try await Self.filled()
        _ = try await LogCompactor(store: fixture.store).compact(account: fixture.accountID)
        let marker = Self.history()[0]
        let replacement = try #require(DeflatedSegment(compressing: ByteBuffer(string: marker.canonicalJSON)))
        try await fixture.store.pool.write { db in
            try db.execute(
                sql: "UPDATE kept_state_page SET bytes = ?, length = ?, crc32 = ?, adler32 = ? WHERE afterPosition = 0",
                arguments: [
                    Data(replacement.bytes.readableBytesView), replacement.length, Int64(replacement.crc32),
                    Int64(replacement.adler32),
                ])
        }
        try await fixture.app().test(.router) { client in
            let gzipped = try await Self.pages(client, fixture, accept: "gzip")
            #expect(gzipped.first?.changes == [marker])
            let plain = try await Self.pages(client, fixture, accept: nil)
            #expect(plain.first?.changes.count ?? 0 > 1)
        }
    }

    /// Pages are used only while the compaction they followed is the account's latest; a stale
    /// set is never stored over a newer compaction's; erasure deletes them with the log.
    @Test func keptPagesFollowTheLatestCompactionAndLeaveWithTheAccount() async throws {
        let fixture = try await Self.filled()
        let store = fixture.store
        let account = fixture.accountID
        _ = try await LogCompactor(store: store).compact(account: account)
        let before = try await store.statePages(account: account)
        // More history, then a compaction the kept pages do not know of (as another process's, whose
        // pages were not kept): they are not used, and the log is read.
        let more = (3501...4000).map { seq in
            change("phone", Int64(seq), .parameter(id: "p\(seq % 10)", value: .int(Int64(seq))), ms: 1_800_000_000_000)
        }
        _ = try await store.push(more, from: DeviceIdentity(accountID: account, device: "phone"))
        let entries = try await store.logEntries(account: account)
        #expect(
            try await store.dropCompacted(
                [], account: account, through: entries.last!.position, expecting: entries.count))
        #expect(
            try await store.pull(account: account, after: 0, limit: 5000, device: nil, confirming: nil, keptPages: true)
                .kept == nil)
        // Pages built for the earlier compaction are refused; the latest's are kept and used.
        #expect(try await store.keepStatePages([], account: account, builtFor: before.builtFor) == false)
        #expect(try await LogCompactor(store: store).keepState(account: account) == 3)
        #expect(
            try await store.pull(account: account, after: 0, limit: 5000, device: nil, confirming: nil, keptPages: true)
                .kept != nil)
        try await fixture.app().test(.router) { client in
            let (spliced, read) = (
                try await Self.pages(client, fixture, accept: "gzip"),
                try await Self.pages(client, fixture, accept: nil)
            )
            #expect(Self.same(spliced, read))
        }
        _ = try await store.eraseAccount(name: "alice", at: 1)
        #expect(
            try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM kept_state_page") } == 0)
    }
}
