import Foundation
import Synchronization
import Testing
import TipSync
import TipSyncCore
import TipSyncSimulation
import TipSyncTestSupport

/// Liveness of the loop apps run (`SyncClient.run()`, what `Tips.configure(.sync(…))` starts): a
/// local change made at any point — before, during or after a push; during a pull or a long-poll;
/// during backoff, a `Retry-After` wait, a clock-skew re-stamp or a token refresh; while the server
/// is down — reaches the server, and the other running device, with no further local change.
///
/// Nothing sleeps: long-polls and waits are parked in a ``LiveNetwork`` and released by the test,
/// and each test waits for events, not time. A stranded change would leave the test waiting: the
/// time limit turns that into a failure.
@Suite(.timeLimit(.minutes(5))) struct SyncLoopLivenessTests {
    /// A once-only trigger, for hooks that act at the first request matching.
    final class Once: Sendable {
        let fired = Mutex(false)
        func fire() -> Bool {
            fired.withLock { done in
                defer { done = true }
                return !done
            }
        }
    }

    /// A change `device` will make the first time one of its `kind` requests reaches `phase`.
    final class PlacedChange: Sendable {
        /// The change's sequence number, and the index of the first request that may carry it.
        let made = Mutex<(seq: Int64, mark: Int)?>(nil)

        init(_ fleet: LiveFleet, _ device: String, _ kind: LiveNetwork.RequestKind, at phase: LiveNetwork.Phase)
            async
        {
            let once = Once()
            let replica = fleet[device]
            await fleet.network.setHook { [self] exchange, at in
                if exchange.device == device, exchange.kind == kind, at == phase, once.fire() {
                    let seq = try! SyncLoopLivenessTests.change(replica, 100)
                    // Made during this request: a push already sent cannot carry it, the next one must.
                    self.made.withLock { $0 = (seq, exchange.index + (kind == .push ? 1 : 0)) }
                }
                return .deliver
            }
        }

        /// Waits until the change was made; its sequence number and mark.
        func value(_ fleet: LiveFleet) async -> (seq: Int64, mark: Int) {
            await fleet.network.waitUntil { made.withLock { $0 != nil } }
            return made.withLock { $0 ?? (0, 0) }
        }
    }

    static func change(_ device: LiveFleet.Device, _ value: Int) throws -> Int64 {
        try device.replica.setParameter("p-\(device.id)", to: .int(Int64(value)))
        return try device.replica.lastLocalSeq
    }

    /// Asserts the change `seq` of `device` reaches the server and the other devices, and that one
    /// of the first `pushes` pushes of `device` the server accepted after `mark` (an exchange index)
    /// carried it: the first, unless a request in flight is retried as it was (after a `429`).
    static func expectDelivered(
        _ fleet: LiveFleet, _ device: String, seq: Int64, after mark: Int, withinPushes limit: Int = 1,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await fleet.waitUntilServerHolds(device, through: seq)
        @Sendable func accepted(_ exchanges: [LiveNetwork.Exchange]) -> [LiveNetwork.Exchange] {
            exchanges.filter { $0.index >= mark && $0.device == device && $0.kind == .push && $0.status == 200 }
        }
        // The server stores a push a moment before its answer reaches the device: wait for that too.
        await fleet.network.waitUntil {
            accepted(await fleet.network.exchanges).contains { ($0.pushedThrough ?? 0) >= seq }
        }
        let pushes = accepted(await fleet.network.exchanges)
        #expect(
            pushes.prefix(limit).contains { ($0.pushedThrough ?? 0) >= seq },
            "one of the first \(limit) accepted pushes after the change carried it: \(pushes)",
            sourceLocation: sourceLocation)
        await fleet.waitUntilEqual(fleet.devices.map(\.id), to: device)
        #expect(fleet.ending(of: device) == nil, "the loop is still running", sourceLocation: sourceLocation)
    }

    @Test func aChangeBeforeTheLoopStartsIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        let seq = try Self.change(fleet["phone"], 1)
        fleet.startAll()
        await Self.expectDelivered(fleet, "phone", seq: seq, after: 0)
        await fleet.stopAll()
    }

    /// The README walkthrough's case: `configure(.sync)` then a change at once, which lands while
    /// the first round pulls. Before the fix the push loop subscribed after that pull: stranded.
    @Test func aChangeDuringTheFirstRoundsPullIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        let placed = await PlacedChange(fleet, "phone", .pull, at: .handled)
        fleet.startAll()
        let (seq, mark) = await placed.value(fleet)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    @Test func aChangeDuringTheFirstRoundsPushIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        _ = try Self.change(fleet["phone"], 1)
        let placed = await PlacedChange(fleet, "phone", .push, at: .handled)
        fleet.startAll()
        let (seq, mark) = await placed.value(fleet)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    /// A device that follows the server's catalog fetches it from inside its pull (issue 33): a
    /// change made while that fetch is under way is pushed all the same.
    @Test func aChangeDuringACatalogFetchIsPushed() async throws {
        let fleet = try await LiveFleet(
            devices: ["phone", "laptop"], configure: { _, configuration in configuration.followsServerCatalog = true })
        try await fleet.server.putCatalog(#"{"tips": [{"id": "served", "title": "Served"}]}"#)
        let placed = await PlacedChange(fleet, "phone", .other, at: .handled)  // GET /v1/catalog
        fleet.startAll()
        let (seq, mark) = await placed.value(fleet)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        #expect(fleet["phone"].replica.catalogTips.map { $0.id } == ["served"])
        await fleet.stopAll()
    }

    /// A change made while a new replica asks the server how far its device's log goes (protocol.md
    /// §7, the first contact) is pushed, numbered after it.
    @Test func aChangeDuringTheFirstContactIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        let placed = await PlacedChange(fleet, "phone", .device, at: .handled)
        fleet.startAll()
        let (seq, mark) = await placed.value(fleet)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    /// A change made while the first round asks the server whom the credential names (`GET
    /// /v1/account`, protocol.md §13.8: the account rollout buckets hash) is pushed all the same,
    /// and the device knows its account afterwards.
    @Test func aChangeDuringTheAccountRequestIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        let placed = await PlacedChange(fleet, "phone", .account, at: .handled)
        fleet.startAll()
        let (seq, mark) = await placed.value(fleet)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        #expect(fleet["phone"].replica.deviceContext.account != nil)
        await fleet.stopAll()
    }

    /// The loop is live (long-poll parked, push loop waiting): a change wakes the push at once.
    @Test func aChangeDuringTheLongPollIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        let mark = await fleet.network.exchanges.count
        let seq = try Self.change(fleet["phone"], 1)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    /// A new point where a device writes (protocol.md §13.12): the app asks whether to show a tip with
    /// a running experiment while the loop is live, which records the tip's reach. That record is
    /// pushed and reaches the other device with no further local change, as any change does.
    @Test func aReachRecordedByAskingTheStatusIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        let catalog = try Catalog(
            validating: Array(
                #"{"tips": [{"id": "search", "title": "Search", "experiment": {"id": "search-7", "holdout": 50, "goal": {"actionPerformed": true}}}]}"#
                    .utf8))
        for device in fleet.devices { try device.replica.load(catalog: catalog) }
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        let mark = await fleet.network.exchanges.count
        let phone = fleet["phone"].replica
        #expect(phone.deviceContext.account != nil, "the loop asked the server for the account")
        // Held out or treated, a tip without rules would show now: asking records its reach.
        _ = phone.displayStatus(ofTip: "search")
        let seq = try phone.lastLocalSeq
        let last = try phone.localChanges().last.map { "\($0.operation)" } ?? ""
        #expect(seq > 0 && last.contains("tipsync.reach:search-7"), "\(last)")
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        let experiment = try #require(catalog.tips[0].experiment)
        #expect(ExperimentRecord.reach.first(of: experiment, in: fleet["laptop"].replica.state) != nil)
        await fleet.stopAll()
    }

    /// Changes made while a live push is in flight, before and after the server stores it.
    @Test(arguments: [LiveNetwork.Phase.sent, .handled])
    func aChangeDuringALivePushIsPushed(phase: LiveNetwork.Phase) async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        let placed = await PlacedChange(fleet, "phone", .push, at: phase)
        _ = try Self.change(fleet["phone"], 1)
        let (seq, mark) = await placed.value(fleet)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    /// The phone's long-poll is answered with the laptop's change; the phone changes something
    /// while that page is on its way.
    @Test func aChangeDuringALivePullIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        let placed = await PlacedChange(fleet, "phone", .longPoll, at: .handled)
        _ = try Self.change(fleet["laptop"], 1)
        let (seq, mark) = await placed.value(fleet)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    /// A push fails (no answer); the device backs off; a change made during the backoff goes with
    /// the retry once the wait ends.
    @Test(arguments: [LiveNetwork.Verdict.fail(.unreachable("refused")), .loseAnswer])
    func aChangeDuringBackoffIsPushedByTheRetry(failure: LiveNetwork.Verdict) async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        let phone = fleet["phone"]
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        let once = Once()
        await fleet.network.setHook { exchange, _ in
            exchange.device == "phone" && exchange.kind == .push && once.fire() ? failure : .deliver
        }
        _ = try Self.change(phone, 1)
        await fleet.network.waitUntil { await fleet.network.devicesAsleep.contains("phone") }
        let mark = await fleet.network.exchanges.count
        let seq = try Self.change(phone, 2)
        await fleet.network.advance()
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    /// `429` with `Retry-After`: the device waits as told, and a change made meanwhile goes too.
    @Test func aChangeDuringARetryAfterWaitIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        let phone = fleet["phone"]
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        let once = Once()
        let limited = SyncHTTPResponse(
            status: 429, body: Data(#"{"error":{"code":"rate_limited","message":"slow down"}}"#.utf8),
            headers: ["retry-after": "7"])
        await fleet.network.setHook { exchange, _ in
            exchange.device == "phone" && exchange.kind == .push && once.fire() ? .answer(limited) : .deliver
        }
        _ = try Self.change(phone, 1)
        await fleet.network.waitUntil { await fleet.network.devicesAsleep.contains("phone") }
        #expect(await fleet.network.sleeps["phone"] == [.seconds(7)])
        let mark = await fleet.network.exchanges.count
        let seq = try Self.change(phone, 2)
        await fleet.network.advance()
        // The limited request is sent again as it was (protocol.md: a retry repeats the request);
        // the push after it carries the new change.
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark, withinPushes: 2)
        await fleet.stopAll()
    }

    /// The server is down when the change is made, and comes back.
    @Test func aChangeWhileTheServerIsDownIsPushedWhenItReturns() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        await fleet.network.setServerDown(true)
        let seq = try Self.change(fleet["phone"], 1)
        await fleet.network.waitUntil { await fleet.network.devicesAsleep == ["phone", "laptop"] }
        // Still down after one backoff: the device keeps trying, the change keeps waiting.
        await fleet.network.advance()
        await fleet.network.waitUntil { await fleet.network.devicesAsleep == ["phone", "laptop"] }
        #expect(await !fleet.serverHolds("phone", through: seq))
        let mark = await fleet.network.exchanges.count
        await fleet.network.setServerDown(false)
        await fleet.network.advance()
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    /// The server restarts (a new process on the same database) between a change and its push.
    @Test func aChangeAcrossAServerRestartIsPushed() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        let once = Once()
        let server = fleet.server
        await fleet.network.setHook { exchange, phase in
            if exchange.device == "phone", exchange.kind == .push, phase == .sent, once.fire() {
                try! await server.restart()
            }
            return .deliver
        }
        let mark = await fleet.network.exchanges.count
        let seq = try Self.change(fleet["phone"], 1)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    /// A device a day fast: its push is refused as `clock_skew`; it corrects its clock and
    /// re-stamps. A change made as the refusal arrives is re-stamped and pushed with the rest; one
    /// made after goes with the next push.
    @Test func aChangeDuringAClockSkewRestampIsPushed() async throws {
        let fleet = try await LiveFleet(
            devices: ["phone", "laptop"],
            clock: { id in
                id == "phone" ? TipsClock.system.offset(by: 86_400) : .system
            })
        let phone = fleet["phone"]
        let once = Once()
        let made = Mutex<Int64?>(nil)
        await fleet.network.setHook { exchange, phase in
            if exchange.device == "phone", exchange.kind == .push, phase == .handled, once.fire() {
                made.withLock { $0 = try! Self.change(phone, 2) }  // still stamped by the fast clock
            }
            return .deliver
        }
        _ = try Self.change(phone, 1)
        fleet.startAll()
        await fleet.network.waitUntil { made.withLock { $0 != nil } }
        let during = try #require(made.withLock { $0 })
        await fleet.waitUntilServerHolds("phone", through: during)
        #expect(await fleet.network.exchanges.contains { $0.device == "phone" && $0.status == 422 })
        let mark = await fleet.network.exchanges.count
        let seq = try Self.change(phone, 3)
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        #expect(abs(phone.replica.clockOffset + 86_400_000) < 60_000)
        await fleet.stopAll()
    }

    /// The JWT expires: the server answers `401 token_expired`, the client asks its provider for
    /// a new one — and a change is made while it does.
    @Test func aChangeDuringATokenRefreshIsPushed() async throws {
        let phoneBox = Mutex<LiveFleet.Device?>(nil)
        let calls = Mutex(0)
        let made = Mutex<Int64?>(nil)
        let fleet = try await LiveFleet(devices: ["phone", "laptop"]) { _ in
            .system
        } configure: { id, configuration in
            guard id == "phone" else { return }
            let fixed = configuration.token
            configuration.tokenProvider = {
                // The first call gives the first token; the second is the refresh.
                if calls.withLock({
                    $0 += 1
                    return $0
                }) == 2, let phone = phoneBox.withLock({ $0 }) {
                    made.withLock { $0 = try! Self.change(phone, 2) }
                }
                return fixed
            }
        }
        phoneBox.withLock { $0 = fleet["phone"] }
        let once = Once()
        let expired = SyncHTTPResponse(
            status: 401, body: Data(#"{"error":{"code":"token_expired","message":"expired"}}"#.utf8))
        await fleet.network.setHook { exchange, _ in
            exchange.device == "phone" && exchange.kind == .push && once.fire() ? .answer(expired) : .deliver
        }
        _ = try Self.change(fleet["phone"], 1)
        fleet.startAll()
        await fleet.network.waitUntil { made.withLock { $0 != nil } }
        let seq = try #require(made.withLock { $0 })
        await fleet.waitUntilServerHolds("phone", through: seq)
        await fleet.waitUntilEqual(["phone", "laptop"], to: "phone")
        #expect(fleet.ending(of: "phone") == nil)
        await fleet.stopAll()
    }

    /// The refreshed token is refused as expired too (the provider gave a stale one): the loop
    /// backs off and asks again instead of stopping sync for good (found by `tipsync-sim live`,
    /// seed 4: two expiries in a row ended the loop, and every later change stayed on the device).
    @Test func aTokenExpiredAgainAfterARefreshBacksOffInsteadOfStopping() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"]) { _ in
            .system
        } configure: { _, configuration in
            let fixed = configuration.token
            configuration.tokenProvider = { fixed }
        }
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        let expiries = Mutex(2)
        let expired = SyncHTTPResponse(
            status: 401, body: Data(#"{"error":{"code":"token_expired","message":"expired"}}"#.utf8))
        await fleet.network.setHook { exchange, phase in
            guard exchange.device == "phone", exchange.kind == .push, phase == .sent else { return .deliver }
            return expiries.withLock { left in
                defer { left -= 1 }
                return left > 0 ? .answer(expired) : .deliver
            }
        }
        let seq = try Self.change(fleet["phone"], 1)
        await fleet.network.waitUntil { await fleet.network.devicesAsleep.contains("phone") }
        #expect(fleet.ending(of: "phone") == nil)
        let mark = await fleet.network.exchanges.count
        await fleet.network.advance()
        await Self.expectDelivered(fleet, "phone", seq: seq, after: mark)
        await fleet.stopAll()
    }

    /// `Tips.syncNow()`'s engine: returns once everything made so far is acknowledged, and says
    /// why not when the server cannot be reached.
    @Test func pushPendingReturnsOnceTheServerHoldsEverything() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        let phone = fleet["phone"]
        let seq = try Self.change(phone, 1)
        try await phone.client.pushPending()
        #expect(await fleet.serverHolds("phone", through: seq))
        await fleet.network.setServerDown(true)
        _ = try Self.change(phone, 2)
        await #expect(throws: SyncClientError.self) { try await phone.client.pushPending() }
        await fleet.network.setServerDown(false)
        try await phone.client.pushPending()
        #expect(await fleet.serverHolds("phone", through: seq + 1))
    }
}

/// The property over random schedules (the same as `tipsync-sim live`): changes at random moments,
/// transient failures, `429`, `500`, expired tokens, a clock-skewed device, server restarts and
/// outages, apps that quit and relaunch — every change made while online is on the server and
/// merged by every running device once the fleet settles, and within a bounded number of rounds
/// after the schedule. Its limit counts the wait for its turn among the CPU-bound tests
/// (``ComputeBoundTests``): about six minutes of them in a debug build on two cores.
@Suite(.timeLimit(.minutes(15))) struct LiveSimulationTests {
    @Test func randomSchedulesStrandNothingAndConverge() async throws {
        try await ComputeBoundTests.run {
            let simulation = LiveSimulation(devices: 3, steps: 30, roundLimit: 3)
            var changes = 0
            for seed in UInt64(1)...40 {
                let outcome = try await simulation.run(seed: seed)
                #expect(outcome.passed, "seed \(seed): \(outcome.violations)")
                changes += outcome.changes
            }
            #expect(changes > 300)
        }
    }
}
