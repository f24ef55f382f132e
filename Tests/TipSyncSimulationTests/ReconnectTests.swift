import Foundation
import Testing
import TipSync
import TipSyncCore
import TipSyncSimulation

/// How a device's sync loop comes back to a server it lost (protocol.md §17.3), read from the waits
/// it asks for: with every draw at the top of its range (the fleet's injected jitter is 1), failures
/// in a row wait 1, 2, 4, … up to 60 s; a completed round starts the count again; `503` with
/// `Retry-After` is waited as told and the request sent again. Nothing sleeps: the waits are parked
/// in the simulated network and released by the test.
@Suite(.timeLimit(.minutes(5))) struct ReconnectTests {
    /// Waits until `device` has asked for `count` waits and is parked in the last.
    static func untilAsleep(_ fleet: LiveFleet, _ device: String, waits count: Int) async {
        await fleet.network.waitUntil {
            let asleep = await fleet.network.devicesAsleep.contains(device)
            let waits = await fleet.network.sleeps[device]?.count ?? 0
            return asleep && waits == count
        }
    }

    /// Lets time pass until every device is back in a long-poll. A device whose request failed while
    /// the server was down may park its wait just after ``LiveNetwork/advance()`` woke the others
    /// (the laptop did, in about one run of three): it is woken too, as time passing would.
    static func untilAllLive(_ fleet: LiveFleet, _ devices: Set<String>) async {
        while !Task.isCancelled {
            await fleet.network.waitUntil {
                let reading = await fleet.network.reading
                return reading.inLongPoll == devices || !reading.asleep.isEmpty
            }
            if await fleet.network.devicesInLongPoll == devices { return }
            await fleet.network.advance()
        }
    }

    @Test func failuresInARowDoubleTheRangeAndACompletedRoundStartsAgain() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        await fleet.network.setServerDown(true)
        for failures in 1...8 {
            await Self.untilAsleep(fleet, "phone", waits: failures)
            if failures < 8 { await fleet.network.advance() }
        }
        // Never above what was already waited (the base at first): back within about as long as the
        // outage lasted.
        #expect(await fleet.network.sleeps["phone"] == [1, 1, 2, 4, 8, 16, 32, 60].map { Duration.seconds($0) })
        // Back: the round completes, and the next outage starts from the base again.
        await fleet.network.setServerDown(false)
        await Self.untilAllLive(fleet, ["phone", "laptop"])
        await fleet.network.setServerDown(true)
        await Self.untilAsleep(fleet, "phone", waits: 9)
        #expect(await fleet.network.sleeps["phone"]?.last == .seconds(1))
        await fleet.network.setServerDown(false)
        await Self.untilAllLive(fleet, ["phone", "laptop"])
        let seq = try SyncLoopLivenessTests.change(fleet["phone"], 1)
        await SyncLoopLivenessTests.expectDelivered(fleet, "phone", seq: seq, after: 0, withinPushes: 3)
        await fleet.stopAll()
    }

    /// A proxy or load balancer before the server answers `503` with `Retry-After`: the device waits
    /// that long (not its own backoff) and sends the same request again.
    @Test func aServiceUnavailableWithRetryAfterIsWaitedAsTold() async throws {
        let fleet = try await LiveFleet(devices: ["phone", "laptop"])
        fleet.startAll()
        await fleet.network.waitUntil { await fleet.network.devicesInLongPoll == ["phone", "laptop"] }
        let once = SyncLoopLivenessTests.Once()
        let unavailable = SyncHTTPResponse(
            status: 503, body: Data("busy".utf8), headers: ["retry-after": "9"])
        await fleet.network.setHook { exchange, _ in
            exchange.device == "phone" && exchange.kind == .push && once.fire() ? .answer(unavailable) : .deliver
        }
        let seq = try SyncLoopLivenessTests.change(fleet["phone"], 1)
        await Self.untilAsleep(fleet, "phone", waits: 1)
        #expect(await fleet.network.sleeps["phone"] == [.seconds(9)])
        await fleet.network.advance()
        await SyncLoopLivenessTests.expectDelivered(fleet, "phone", seq: seq, after: 0, withinPushes: 2)
        await fleet.stopAll()
    }
}
