import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOFoundationEssentialsCompat
import Synchronization
import Testing
import TipSync
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 74, item 2: one device opening live streams at many distinct cursors made the server read
/// and encode a page of the log for each — pages no other stream shares — and moved other devices'
/// p99 to 2.4–4.9× their baseline; a stream opening cost one request of the device's budget however
/// much of the log it read. What the log reads for a device is now spent from its own budget
/// (``ServerConfiguration/readByteRate``): in debt, its next pull and stream opening are refused
/// before anything is read, and its open streams wait before their next page.
@Suite struct ReadBudgetTests {
    static let start: Int64 = 1_700_000_000_000

    /// A read budget of 1,000 bytes a second, 2,000 at once, on a clock the test moves; the phone
    /// pushed 40 changes of about 300 bytes (a page of ten is more than the burst).
    static func setup() async throws -> (ServerFixture, ServerConfiguration, ManualServerClock) {
        let fixture = try await ServerFixture.make()
        let phone = DeviceIdentity(accountID: fixture.accountID, device: "phone")
        _ = try await fixture.store.push(
            (1...40).map {
                change(
                    "phone", $0, .parameter(id: "p\($0)", value: .string(String(repeating: "x", count: 200))),
                    ms: UInt64(start))
            },
            from: phone)
        var configuration = ServerConfiguration.test
        configuration.readByteRate = RateLimit(perSecond: 1000, burst: 2000)
        return (fixture, configuration, ManualServerClock(start))
    }

    @Test func aDeviceWhoseReadsAreInDebtIsRefusedBeforeItsNextPullReads() async throws {
        let (fixture, configuration, clock) = try await Self.setup()
        try await fixture.app(configuration: configuration, now: { clock.now }).test(.router) { client in
            func pull(_ device: String, limit: Int = 1000) async throws -> (HTTPResponse.Status, String?, Int) {
                try await client.execute(uri: "/v1/pull?limit=\(limit)", method: .get, headers: fixture.headers(device))
                {
                    response in
                    let changes =
                        response.status == .ok
                        ? try JSONCoding.decode(PullResponse.self, from: Data(buffer: response.body)).changes.count : 0
                    return (response.status, response.headers[.retryAfter], changes)
                }
            }
            // The whole log in one page: answered (the work is done), and the budget is in debt.
            let first = try await pull("laptop")
            #expect(first.0 == .ok && first.2 == 40)
            // The next pull is refused before it reads, with the seconds until the debt is paid.
            let refused = try await pull("laptop", limit: 1)
            #expect(refused.0 == .tooManyRequests)
            #expect(refused.1 == "1")
            // Another device of the account reads on its own budget.
            #expect(try await pull("phone").0 == .ok)
            // Once out of debt the device pulls again.
            clock.advance(by: 1_000)
            #expect(try await pull("laptop", limit: 1).0 == .ok)
        }
    }

    @Test func aStreamOpeningInDebtIsRefusedBeforeItReads() async throws {
        let (fixture, configuration, clock) = try await Self.setup()
        try await fixture.app(configuration: configuration, now: { clock.now }).test(.router) { client in
            let cursor = try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")) {
                try JSONCoding.decode(PullResponse.self, from: Data(buffer: $0.body)).cursor
            }
            let start = "\(cursor.split(separator: ".")[0]).0"
            try await client.execute(
                uri: "/v1/live?cursor=\(start)", method: .get, headers: fixture.headers("laptop")
            ) { response in
                #expect(response.status == .tooManyRequests)
                #expect(String(buffer: response.body).contains("rate_limited"))
                #expect(String(buffer: response.body).contains("bytes of changes"))
            }
        }
    }

    @Test func anOpenStreamWaitsOutTheDebtBeforeItReadsItsNextPage() async throws {
        let (fixture, configuration, clock) = try await Self.setup()
        let laptop = DeviceIdentity(accountID: fixture.accountID, device: "laptop")
        let pauses = Mutex<[Duration]>([])
        let budget = RateLimiter<DeviceIdentity>(configuration.readByteRate)
        let feed = LiveFeed(
            account: fixture.accountID, device: laptop, limit: 10, store: fixture.store,
            notifier: ChangeNotifier(livePages: LivePages(now: { 0 })), activity: DeviceActivity(),
            metrics: ServerMetrics(registry: nil), readBudget: budget, now: { clock.now },
            pause: { duration in
                pauses.withLock { $0.append(duration) }
                clock.advance(by: Int64(duration.components.seconds) * 1000)
            })
        let writer = RecordingWriter()
        var any: any ResponseBodyWriter = writer
        // Four pages of ten changes (each more than the burst, so each costs the burst) on a budget
        // of 2,000 bytes at once and 1,000 a second: the first is read at once and empties it; the
        // second waits for one byte of budget (1 s), the others for their predecessor's debt (2 s).
        let end = try await feed.catchUp(after: 0, to: &any)
        #expect(end == 40)
        #expect(writer.box.written.withLock { $0.count } == 4)
        #expect(pauses.withLock { $0 } == [.seconds(1), .seconds(2), .seconds(2)])
        #expect(budget.wait(laptop, now: clock.now) != nil, "the last page left the budget in debt")
    }
}
