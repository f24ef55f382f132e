import Foundation
import Hummingbird
import NIOCore
import Synchronization
import Testing
import TipSync
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// What a live stream that carries changes writes when pushes' notifications reach it in another
/// order than their commits, or mixed with news from other instances: every change it was woken
/// for, in log order, and no store read for what pushes on this instance already handed over.
@Suite struct LivePagesTests {
    struct Setup {
        let fixture: ServerFixture
        /// Pushed pages are kept for a while: time stands still here, so none expires.
        let notifier = ChangeNotifier(livePages: LivePages(now: { 0 }))
        let stream: LiveStream
        let phone: DeviceIdentity

        init() async throws {
            fixture = try await ServerFixture.make()
            let laptop = DeviceIdentity(accountID: fixture.accountID, device: "laptop")
            phone = DeviceIdentity(accountID: fixture.accountID, device: "phone")
            let start = try await fixture.store.pull(account: fixture.accountID, after: 0, limit: 100)
            let metrics = ServerMetrics(registry: nil)
            let feed = LiveFeed(
                account: fixture.accountID, device: laptop, limit: 100, store: fixture.store, notifier: notifier,
                activity: DeviceActivity(), metrics: metrics, readBudget: RateLimiter(.unlimited), now: { 0 })
            stream = LiveStream(
                subscription: notifier.subscribeLive(laptop),
                mode: .carrying(feed, generation: start.generation, opened: nil, catalog: nil), position: start.cursor,
                metrics: metrics, now: { 0 })
        }

        /// Stores one change from the phone without telling anyone; returns the push's page.
        func push(_ seq: Int64) async throws -> (after: Int64, page: LivePages.Page)? {
            let outcome = try await fixture.store.push(
                [change("phone", seq, .parameter(id: "p\(seq)", value: .int(seq)))], from: phone)
            return LivePages.primed(outcome.appended, generation: outcome.generation, serverTime: 0)
        }

        func notify(_ primed: (after: Int64, page: LivePages.Page)?) {
            notifier.notify(account: fixture.accountID) { primed }
        }

        /// The sequence numbers of the changes the stream writes for its pending news.
        func wake() async throws -> [Int64] {
            let writer = RecordingWriter()
            var any: any ResponseBodyWriter = writer
            try await stream.wake(&any)
            return try writer.box.written.withLock { $0 }.flatMap { event -> [Int64] in
                guard let data = event.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }) else {
                    return []
                }
                return try JSONCoding.decode(PullResponse.self, from: Data(data.dropFirst(6).utf8)).changes.map(\.seq)
            }
        }
    }

    @Test func pushesWhoseNotificationsCrossedAreBothWritten() async throws {
        let setup = try await Setup()
        let first = try await setup.push(1)
        let second = try await setup.push(2)
        // The second push's notification overtakes the first's (two requests finishing at once).
        setup.notify(second)
        setup.notify(first)
        #expect(try await setup.wake() == [1, 2])
    }

    @Test func aPushPageBeforeNewsFromAnotherInstanceDoesNotEndTheCatchUp() async throws {
        let setup = try await Setup()
        setup.notify(try await setup.push(1))
        // Another instance's push: its news carries no page.
        _ = try await setup.push(2)
        setup.notify(nil)
        #expect(try await setup.wake() == [1, 2])
    }

    @Test func pushesOnThisInstanceAreWrittenWithoutAStoreReadEvenWhenTheStreamFellBehind() async throws {
        let setup = try await Setup()
        setup.notify(try await setup.push(1))
        #expect(try await setup.wake() == [1])
        let reads = setup.notifier.livePages.reads
        // Three pushes before the stream writes again (a busy server): their pages chain.
        for seq in Int64(2)...4 { setup.notify(try await setup.push(seq)) }
        #expect(try await setup.wake() == [2, 3, 4])
        #expect(setup.notifier.livePages.reads == reads)
        // And they are at hand without a wait (the connection's event loop writes them at once).
        setup.notify(try await setup.push(5))
        setup.notify(try await setup.push(6))
        let bytes = try #require(setup.stream.immediate(setup.stream.takeNews()))
        #expect(String(buffer: bytes).components(separatedBy: "event: changes").count == 3)
        #expect(setup.notifier.livePages.reads == reads)
    }

    @Test func pushedPagesAreKeptForAWhileThenReadAgain() async throws {
        let clock = Atomic<UInt64>(0)
        let fixture = try await ServerFixture.make()
        let pages = LivePages(now: { clock.load(ordering: .relaxed) })
        let phone = DeviceIdentity(accountID: fixture.accountID, device: "phone")
        for seq in Int64(1)...3 {
            let outcome = try await fixture.store.push(
                [change("phone", seq, .parameter(id: "p", value: .int(seq)))], from: phone)
            pages.news(
                account: fixture.accountID,
                primed: LivePages.primed(outcome.appended, generation: outcome.generation, serverTime: 0))
            clock.add(LivePages.pushedLifetime / 2, ordering: .relaxed)
        }
        // The first push's page was handed over a lifetime before the third's: dropped then.
        #expect(pages.ready(account: fixture.accountID, after: 0, limit: 100) == nil)
        let second = try #require(pages.ready(account: fixture.accountID, after: 1, limit: 100))
        #expect(second.more, "the log goes on after it")
        let third = try #require(pages.ready(account: fixture.accountID, after: 2, limit: 100))
        #expect(!third.more, "the end of the log")
    }
}
