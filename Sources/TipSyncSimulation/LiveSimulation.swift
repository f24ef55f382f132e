public import Foundation
import Synchronization
import TipSync
import TipSyncCore

/// Seeded schedules for devices that run the real sync loop (``SyncClient/run()``, as apps do),
/// not hand-driven rounds: local changes at random moments, lost requests and answers, `429` with
/// `Retry-After`, `500`, `401 token_expired`, a device a day fast (`clock_skew`), server restarts and
/// outages, apps that quit and relaunch. After every step the fleet settles — each running device
/// either waits on its long-poll with nothing left to push, or waits out a backoff — and then:
///
/// - **liveness**: while the server is up and no fault is pending, every change a running device
///   made is on the server and merged by every other running device, with no further round; after
///   the schedule, faults healed, the same holds within ``roundLimit`` rounds (a round: every
///   backoff ends and every long-poll is answered);
/// - **no stranded change**: a device never settles into waiting with an unpushed change;
/// - **the loop never gives up**: `run()` of a running device never returns or throws;
/// - **convergence** and the history invariants (``InvariantChecker``) at the end.
public struct LiveSimulation: Sendable {
    public var devices: Int
    public var steps: Int
    /// Rounds after the schedule within which everything must arrive everywhere.
    public var roundLimit: Int
    public var scratch: URL

    public init(
        devices: Int = 3, steps: Int = 30, roundLimit: Int = 3, scratch: URL = FileManager.default.temporaryDirectory
    ) {
        self.devices = devices
        self.steps = steps
        self.roundLimit = roundLimit
        self.scratch = scratch
    }

    /// What one seed found.
    public struct Outcome: Sendable {
        public var seed: UInt64
        /// Broken invariants, one line each (empty: passed).
        public var violations: [String]
        /// Local changes made.
        public var changes: Int
        /// Rounds the fleet needed after the schedule (at most ``LiveSimulation/roundLimit``).
        public var rounds: Int
        public var passed: Bool { violations.isEmpty }
    }

    /// A fault armed for a device's next request.
    enum Fault: CaseIterable {
        case loseRequest, loseAnswer, rateLimited, serverError, tokenExpired

        var verdict: LiveNetwork.Verdict {
            switch self {
            case .loseRequest: .fail(.unreachable("request lost"))
            case .loseAnswer: .loseAnswer
            case .rateLimited:
                .answer(
                    SyncHTTPResponse(
                        status: 429, body: Data(#"{"error":{"code":"rate_limited","message":"slow down"}}"#.utf8),
                        headers: ["retry-after": "2"]))
            case .serverError:
                .answer(
                    SyncHTTPResponse(status: 500, body: Data(#"{"error":{"code":"internal","message":"boom"}}"#.utf8)))
            case .tokenExpired:
                .answer(
                    SyncHTTPResponse(
                        status: 401, body: Data(#"{"error":{"code":"token_expired","message":"expired"}}"#.utf8)))
            }
        }
    }

    final class Armed: Sendable {
        let faults = Mutex<[String: [Fault]]>([:])
        func arm(_ fault: Fault, for device: String) { faults.withLock { $0[device, default: []].append(fault) } }
        func take(for device: String) -> Fault? {
            faults.withLock { $0[device]?.isEmpty == false ? $0[device]!.removeFirst() : nil }
        }
        var pending: Bool { faults.withLock { $0.values.contains { !$0.isEmpty } } }
        func clear() { faults.withLock { $0 = [:] } }
    }

    public func run(seed: UInt64) async throws -> Outcome {
        var random = SimulationRandom(seed: seed)
        let ids = (0..<devices).map { "d\($0)" }
        // Some seeds have a device a day fast: its first push is refused as clock_skew.
        let fast = random.chance(0.3) ? ids.randomElement(using: &random) : nil
        let catalog = History.defaultCatalog
        let fleet = try await LiveFleet(
            devices: ids, catalog: catalog, scratch: scratch,
            clock: { id in id == fast ? TipsClock.system.offset(by: 86_400) : .system },
            configure: { _, configuration in
                let token = configuration.token
                configuration.tokenProvider = { token }  // asked again after token_expired
            })
        let armed = Armed()
        await fleet.network.setHook { exchange, phase in
            guard phase == .sent, let fault = armed.take(for: exchange.device) else { return .deliver }
            return fault.verdict
        }
        var run = Run(fleet: fleet, armed: armed, catalog: catalog, running: Set(ids))
        // Apps that were used offline first: their changes wait in the outbox (the fast device's
        // under far-future stamps, refused as clock_skew and re-stamped by the first round).
        for id in ids {
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                try await run.perform(.change(id, Int.random(in: 0..<6, using: &random)))
            }
        }
        fleet.startAll()
        var violations: [String] = []
        // The first rounds run healthy. (A device a day fast whose first push got no answer keeps
        // those stamps until the server's clock reaches them, protocol.md section 10: late by design.)
        if let problem = await run.settle() { violations.append("first round: \(problem)") }
        violations += await run.liveness().map { "first round: \($0)" }
        for index in 0..<steps where violations.isEmpty {
            let step = run.randomStep(&random, ids: ids)
            try await run.perform(step)
            if let problem = await run.settle() {
                violations.append("step \(index) (\(step)): \(problem)")
                break
            }
            let sleeping = await fleet.network.devicesAsleep.intersection(run.running)
            if !run.faulty, sleeping.isEmpty {
                violations += await run.liveness().map { "step \(index) (\(step)): \($0)" }
            }
            if !violations.isEmpty { break }
        }
        var rounds = 0
        if violations.isEmpty {
            // Heal everything, relaunch every app, and count rounds until everything is everywhere.
            armed.clear()
            await fleet.network.setServerDown(false)
            for id in ids where !run.running.contains(id) { fleet.start(id) }
            run.running = Set(ids)
            while true {
                if let problem = await run.settle() {
                    violations.append("after the schedule: \(problem)")
                    break
                }
                let missing = await run.liveness()
                if missing.isEmpty { break }
                if rounds == roundLimit {
                    violations += missing.map { "liveness after \(roundLimit) rounds: \($0)" }
                    break
                }
                rounds += 1
                await fleet.network.advance()
                await fleet.network.releaseLongPolls()
            }
        }
        if violations.isEmpty {
            let checker = InvariantChecker(catalog: catalog, now: Int64(Date().timeIntervalSince1970 * 1000))
            violations += try checker.check(fleet.devices.map { ($0.id, $0.replica) })
        }
        for id in ids {
            if let ending = fleet.ending(of: id), run.running.contains(id) {
                violations.append("\(id)'s sync loop ended by itself: \(ending)")
            }
        }
        await fleet.stopAll()
        return Outcome(seed: seed, violations: violations, changes: run.changes, rounds: rounds)
    }

    /// One schedule's moving parts.
    struct Run {
        let fleet: LiveFleet
        let armed: Armed
        let catalog: Catalog
        var running: Set<String>
        var serverDown = false
        var changes = 0

        enum Step: CustomStringConvertible {
            case change(String, Int)
            case fault(String, Fault)
            case restartServer
            case serverDown(Bool)
            case advance
            case releaseLongPolls
            case quit(String)
            case relaunch(String)

            var description: String {
                switch self {
                case .change(let device, let kind): "change \(kind) on \(device)"
                case .fault(let device, let fault): "\(fault) for \(device)"
                case .restartServer: "server restarts"
                case .serverDown(let down): down ? "server down" : "server up"
                case .advance: "time passes"
                case .releaseLongPolls: "long-polls time out"
                case .quit(let device): "\(device) quits"
                case .relaunch(let device): "\(device) relaunches"
                }
            }
        }

        /// Faults pending, the server down or a device waiting out a backoff: not the healthy
        /// moment at which everything must already have arrived.
        var faulty: Bool { serverDown || armed.pending }

        func randomStep(_ random: inout SimulationRandom, ids: [String]) -> Step {
            let device = ids.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<50: return .change(device, Int.random(in: 0..<6, using: &random))
            case 50..<65: return .fault(device, Fault.allCases.randomElement(using: &random)!)
            case 65..<70: return .restartServer
            case 70..<76: return .serverDown(!serverDown)
            case 76..<86: return .advance
            case 86..<90: return .releaseLongPolls
            default: return running.contains(device) ? .quit(device) : .relaunch(device)
            }
        }

        mutating func perform(_ step: Step) async throws {
            switch step {
            case .change(let device, let kind):
                let replica = fleet[device].replica
                changes += 1
                switch kind {
                case 0: try replica.donate(event: "opened")
                case 1: try replica.donate(event: "viewed", info: .int(Int64(changes)))
                case 2: try replica.setParameter("level", to: .int(Int64(changes % 4)))
                case 3: try replica.recordDisplay(tip: "twice", duration: 1)
                case 4: try replica.invalidate(tip: "plain", reason: .tipClosed)
                default: try replica.resetEligibility(tip: "plain")
                }
            case .fault(let device, let fault): armed.arm(fault, for: device)
            case .restartServer: try await fleet.server.restart()
            case .serverDown(let down):
                serverDown = down
                await fleet.network.setServerDown(down)
            case .advance: await fleet.network.advance()
            case .releaseLongPolls: await fleet.network.releaseLongPolls()
            case .quit(let device):
                await fleet.stop(device)
                running.remove(device)
            case .relaunch(let device):
                fleet.start(device)
                running.insert(device)
            }
        }

        /// Waits until every running device waits: on its long-poll with its outbox empty, or out a
        /// backoff. A device that waits on its long-poll with changes still unpushed, and stays so
        /// while every other task runs many times over, has stranded them: that is reported.
        func settle() async -> String? {
            var stillSince = 0
            var last = ""
            for _ in 0..<2_000_000 {
                for id in running.sorted() {
                    if let ending = fleet.ending(of: id) { return "\(id)'s sync loop ended by itself: \(ending)" }
                }
                let (state, stranded) = await snapshot()
                if state.isEmpty { return nil }
                if let stranded {
                    if stranded == last { stillSince += 1 } else { stillSince = 0 }
                    last = stranded
                    if stillSince > 20_000 { return "stranded: \(stranded)" }
                }
                await Task.yield()
            }
            return "the fleet never settled"
        }

        /// What keeps the fleet from being settled ("" when it is), and a device waiting on its
        /// long-poll with unpushed changes, if any.
        func snapshot() async -> (String, String?) {
            let network = fleet.network
            let reading = await network.reading
            let (inLongPoll, asleep, inFlight) = (reading.inLongPoll, reading.asleep, reading.requestsInFlight)
            var busy: [String] = []
            var stranded: String?
            for id in running.sorted() {
                if asleep.contains(id) { continue }
                let waiting = await fleet[id].client.isAwaitingLocalChanges
                guard inLongPoll.contains(id), waiting else {
                    busy.append(id)
                    continue
                }
                let replica = fleet[id].replica
                if let last = try? replica.lastLocalSeq, let pushed = try? replica.syncProgress.pushedSeq, pushed < last
                {
                    busy.append(id)
                    stranded = "\(id) waits with changes \(pushed + 1)...\(last) unpushed"
                }
            }
            // Parked long-polls are requests in flight too; anything beyond them is moving.
            if inFlight > inLongPoll.count { busy.append("requests in flight") }
            // What the devices said holds only if nothing moved while they were asked.
            if await network.eventCount != reading.events { busy.append("events meanwhile") }
            return (busy.joined(separator: ", "), stranded)
        }

        /// While healthy and settled: every running device's changes are on the server, and every
        /// running device holds what the server holds.
        func liveness() async -> [String] {
            var missing: [String] = []
            let ids = running.sorted()
            for id in ids {
                let replica = fleet[id].replica
                let last = (try? replica.lastLocalSeq) ?? 0
                let held = (try? await fleet.server.highestSeq(of: id)) ?? 0
                if held < last { missing.append("\(id)'s changes \(held + 1)...\(last) are not on the server") }
            }
            if let first = ids.first {
                let reference = fleet[first].replica.state
                for id in ids.dropFirst() where fleet[id].replica.state != reference {
                    missing.append("\(id) has not merged what \(first) holds")
                }
            }
            return missing
        }
    }
}
