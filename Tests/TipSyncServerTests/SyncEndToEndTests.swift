import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

/// Real replicas syncing through a real server on a loopback port.
@Suite struct SyncEndToEndTests {
    struct Dismissable: Tip {
        var id: String { "dismissable" }
        var title: String { "Dismiss me" }
    }

    struct Counted: Tip {
        var id: String { "counted" }
        var title: String { "Counted" }
        var options: [Option] { Tips.MaxDisplayCount(2) }
    }

    func client(_ replica: TipsReplica, _ fixture: ServerFixture, port: Int) -> SyncClient {
        var configuration = SyncConfiguration(
            server: URL(string: "http://127.0.0.1:\(port)")!, token: fixture.tokens[replica.deviceID]!)
        configuration.longPollSeconds = 5
        return SyncClient(replica: replica, configuration: configuration)
    }

    @Test func aDismissalOnOneDeviceIsSeenOnTheOther() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            #expect(Dismissable().status(in: laptop) == .available)
            try Dismissable().invalidate(reason: .tipClosed, in: phone)
            try await client(phone, fixture, port: port).syncOnce()
            try await client(laptop, fixture, port: port).syncOnce()
            #expect(Dismissable().status(in: laptop) == .invalidated(.tipClosed))
        }
    }

    /// A page gzip shrinks a hundredfold (a parameter holding 60,000 equal bytes, within the 64 KiB a
    /// change may have) reaches the other device. AsyncHTTPClient's shared configuration refuses any
    /// answer that inflates more than 25 times its size, which left every other device of the
    /// account unable to pull ("sync server unreachable") for as long as the change was in the log.
    @Test func aPageThatInflatesAHundredfoldIsRead() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        let value = JSONValue.string(String(repeating: "x", count: 60_000))
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            try phone.setParameter("layout", to: value)
            try await client(phone, fixture, port: port).syncOnce()
            try await client(laptop, fixture, port: port).syncOnce()
            #expect(laptop.parameterValue("layout") == value)
        }
    }

    @Test func concurrentParameterWritesConvergeAndDisplaysAddUp() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            try phone.setParameter("plan", to: .string("pro"))
            try laptop.setParameter("plan", to: .string("free"))
            try Counted().recordDisplay(in: phone)
            try Counted().recordDisplay(in: laptop)
            let phoneClient = client(phone, fixture, port: port)
            let laptopClient = client(laptop, fixture, port: port)
            try await phoneClient.syncOnce()
            try await laptopClient.syncOnce()
            try await phoneClient.syncOnce()
            #expect(phone.parameterValue("plan") == laptop.parameterValue("plan"))
            #expect(phone.state == laptop.state)
            #expect(phone.displayTotals(ofTip: "counted").count == 2)
            #expect(Counted().status(in: laptop) == .invalidated(.displayCountExceeded))
            #expect(Counted().status(in: phone) == .invalidated(.displayCountExceeded))
        }
    }

    @Test func aDeviceADayInTheFutureConvergesAndDoesNotWinForever() async throws {
        let fixture = try await ServerFixture.make()
        let future = try makeDevice("phone", clock: TipsClock.system.offset(by: 86_400))
        let honest = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            try future.setParameter("theme", to: .string("dark"))
            let futureClient = client(future, fixture, port: port)
            try await futureClient.syncOnce()  // rejected as clock_skew, corrected, re-stamped, pushed
            #expect(abs(future.clockOffset + 86_400_000) < 60_000)
            #expect(try future.syncProgress.pushedSeq == 1)
            #expect(
                try future.localChanges().allSatisfy {
                    $0.hlc.milliseconds < UInt64(Date().timeIntervalSince1970 * 1000) + 300_000
                })

            // A later write by the honest device wins: the skewed one's stamp is not a day ahead any more.
            let honestClient = client(honest, fixture, port: port)
            try await honestClient.syncOnce()
            #expect(honest.parameterValue("theme") == .string("dark"))
            try honest.setParameter("theme", to: .string("light"))
            try await honestClient.syncOnce()
            try await futureClient.syncOnce()
            #expect(future.parameterValue("theme") == .string("light"))
            #expect(future.state == honest.state)
        }
    }

    /// Issue 12, defect 5: after `clock_skew`, re-stamped changes kept their payload times a day
    /// ahead, so never-shown tips stayed throttled and donations counted as recent for a day on every
    /// device. Payload times move back with the stamps.
    @Test func reStampingMovesPayloadTimesOntoTheCorrectedClock() async throws {
        let fixture = try await ServerFixture.make()
        let future = try makeDevice("phone", clock: TipsClock.system.offset(by: 86_400))
        let honest = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            try future.donate(event: "opened")
            try future.recordDisplay(tip: "welcome", duration: 2)
            try await client(future, fixture, port: port).syncOnce()  // clock_skew, corrected, re-stamped
            try await client(honest, fixture, port: port).syncOnce()
            let realNow = Int64(Date().timeIntervalSince1970 * 1000)
            let changes = try future.localChanges()
            #expect(changes.count == 2)
            for change in changes {
                switch change.operation {
                case .donation(_, _, let date, _): #expect(abs(date - realNow) < 300_000, "date \(date)")
                case .display(_, _, _, _, let last): #expect(abs(last - realNow) < 300_000, "lastDisplayed \(last)")
                default: Issue.record("unexpected \(change)")
                }
            }
            // Every device now holds the corrected times, not the day-ahead ones.
            let latest = try #require(honest.state.lastDisplayAnywhere)
            #expect(abs(latest - realNow) < 300_000)
            #expect(honest.state.events["opened"]?.donations.allSatisfy { abs($0.date - realNow) < 300_000 } == true)
            #expect(future.state == honest.state)
        }
    }

    @Test func liveUpdatesReachARunningDevice() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            let laptopClient = client(laptop, fixture, port: port)
            let running = Task { try await laptopClient.run() }
            defer { running.cancel() }
            // A new device holds its tips until its first sync (protocol.md §17.1).
            #expect(await laptopClient.waitForFirstSync(timeout: .seconds(60)))
            var updates = Dismissable().statusUpdates(in: laptop).makeAsyncIterator()
            #expect(await updates.next() == .available)
            try Dismissable().invalidate(reason: .tipClosed, in: phone)
            try await client(phone, fixture, port: port).syncOnce()
            // No sleeping: the laptop's long-poll wakes on the push and its status stream emits.
            #expect(await updates.next() == .invalidated(.tipClosed))
        }
    }

    @Test func anUnreachableServerIsAClearTransientError() async throws {
        let phone = try makeDevice("phone")
        let client = SyncClient(
            replica: phone, configuration: SyncConfiguration(server: URL(string: "http://127.0.0.1:9")!, token: "x"))
        try phone.donate(event: "e")
        await #expect(throws: SyncClientError.self) { try await client.syncOnce() }
        #expect(await client.lastError?.isTransient == true)
        #expect(try phone.outbox(limit: 10).count == 1)  // nothing lost: it waits in the outbox
    }

    @Test func onlyAnErasedAccountEndsLiveSync() {
        // `run()` retries every failure with backoff (protocol.md §17.3): a refusal the device cannot
        // fix by itself may still heal (a server on the wrong database, a reissued token). Only an
        // answer that can never change ends it.
        #expect(SyncClientError.rejected(status: 422, code: "clock_skew", message: "").isTransient)
        #expect(SyncClientError.rejected(status: 503, code: "server_error", message: "").isTransient)
        #expect(SyncClientError.rejected(status: 429, code: "rate_limited", message: "").isTransient)
        #expect(SyncClientError.rejected(status: 422, code: "invalid_change", message: "").isTransient)
        #expect(SyncClientError.rejected(status: 403, code: "device_mismatch", message: "").isTransient)
        #expect(SyncClientError.unauthorized("revoked").isTransient)
        #expect(SyncClientError.rejected(status: 401, code: "account_erased", message: "").endsSync)
        #expect(SyncClientError.invalidServerURL("ftp://x").endsSync)
    }
}
