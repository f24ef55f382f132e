import Testing
import TipSyncCore
import TipSyncTestSupport

/// A device in a pure simulation: makes changes from its own view, like a real replica does.
struct SimulatedDevice {
    let id: String
    var state = ReplicaState()
    var clock = HybridLogicalClock()
    var seq: Int64 = 0
    var log: [Change] = []
    var physical: UInt64

    init(id: String, physical: UInt64) {
        self.id = id
        self.physical = physical
    }

    mutating func make(_ operation: Change.Operation) {
        seq += 1
        let change = Change(device: id, seq: seq, hlc: clock.tick(physicalMilliseconds: physical), operation: operation)
        state.apply(change)
        log.append(change)
    }

    mutating func display(_ tip: String) {
        let (epoch, counter) = state.counter(of: tip, device: id)
        make(
            .display(
                tip: tip, epoch: epoch, count: (counter?.count ?? 0) + 1, duration: (counter?.duration ?? 0) + 1.5,
                lastDisplayed: Int64(physical)))
    }

    mutating func receive(_ changes: [Change]) {
        for change in changes {
            clock.observe(change.hlc, physicalMilliseconds: physical)
            state.apply(change)
        }
    }

    /// A random local operation.
    mutating func randomOperation(using rng: inout SeededGenerator) {
        let tip = "t\(Int.random(in: 0..<3, using: &rng))"
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<20:
            make(
                .parameter(
                    id: "p\(Int.random(in: 0..<3, using: &rng))", value: .int(Int64.random(in: 0..<100, using: &rng))))
        case 20..<32:
            make(.eligibility(tip: tip, state: .invalidated(InvalidationReason.allCases.randomElement(using: &rng)!)))
        case 32..<40: make(.eligibility(tip: tip, state: .eligible))
        case 40..<65: display(tip)
        case 65..<92:
            make(
                .donation(
                    event: "e\(Int.random(in: 0..<2, using: &rng))", id: "\(id):\(seq + 1)", date: Int64(physical),
                    info: .int(Int64.random(in: 0..<3, using: &rng))))
        case 92..<98: make(.donationsDeleted(event: "e\(Int.random(in: 0..<2, using: &rng))"))
        default: make(.datastoreReset)
        }
    }
}

/// Runs a random multi-device history with partial exchanges; returns the devices.
func simulate(seed: UInt64, devices count: Int = 3, steps: Int = 60) -> [SimulatedDevice] {
    var rng = SeededGenerator(seed: seed)
    var devices = (0..<count).map {
        SimulatedDevice(
            id: "dev\($0)", physical: 1_000_000 + UInt64.random(in: 0..<100_000, using: &rng) * UInt64($0 + 1))
    }
    for _ in 0..<steps {
        let index = Int.random(in: 0..<count, using: &rng)
        devices[index].physical += UInt64.random(in: 0..<2_000, using: &rng)
        if Bool.random(using: &rng) {
            devices[index].randomOperation(using: &rng)
        } else {
            let other = Int.random(in: 0..<count, using: &rng)
            let partial = devices[other].log.filter { _ in Bool.random(using: &rng) }
            devices[index].receive(partial.shuffled(using: &rng))
        }
    }
    return devices
}

@Suite struct MergePropertyTests {
    @Test(arguments: 0..<150) func orderAndDuplicationDoNotMatter(seed: UInt64) {
        var rng = SeededGenerator(seed: seed &* 7919)
        let changes = simulate(seed: seed).flatMap(\.log)
        var inOrder = ReplicaState()
        for change in changes { inOrder.apply(change) }
        var shuffled = ReplicaState()
        for change in changes.shuffled(using: &rng) { shuffled.apply(change) }
        var duplicated = ReplicaState()
        for change in (changes + changes.filter { _ in Bool.random(using: &rng) }).shuffled(using: &rng) {
            duplicated.apply(change)
        }
        #expect(inOrder == shuffled)
        #expect(inOrder == duplicated)
    }

    @Test(arguments: 0..<100) func replicasConvergeAfterExchangingEverything(seed: UInt64) {
        var devices = simulate(seed: seed)
        let all = devices.flatMap(\.log)
        for index in devices.indices { devices[index].receive(all) }
        for device in devices.dropFirst() { #expect(device.state == devices[0].state) }
    }

    @Test(arguments: 0..<100) func mergingIsAssociativeOverGroupsOfChanges(seed: UInt64) {
        // (A then B) then C equals A then (B then C) when each group is applied as a unit, and equals
        // any grouping: state depends only on the set of changes.
        var rng = SeededGenerator(seed: seed)
        let changes = simulate(seed: seed).flatMap(\.log)
        let cut1 = Int.random(in: 0...changes.count, using: &rng)
        let cut2 = Int.random(in: cut1...changes.count, using: &rng)
        let (a, b, c) = (changes[..<cut1], changes[cut1..<cut2], changes[cut2...])
        var left = ReplicaState()
        for change in a + b { left.apply(change) }
        for change in c { left.apply(change) }
        var right = ReplicaState()
        for change in b + c { right.apply(change) }
        for change in a { right.apply(change) }
        #expect(left == right)
    }

    @Test func lastWriterWinsByHLCThenDevice() {
        var state = ReplicaState()
        let early = Change(
            device: "b", seq: 1, hlc: HLC(milliseconds: 10, counter: 0), operation: .parameter(id: "p", value: .int(1)))
        let late = Change(
            device: "a", seq: 1, hlc: HLC(milliseconds: 11, counter: 0), operation: .parameter(id: "p", value: .int(2)))
        let tie = Change(
            device: "c", seq: 1, hlc: HLC(milliseconds: 11, counter: 0), operation: .parameter(id: "p", value: .int(3)))
        state.apply(late)
        state.apply(early)
        #expect(state.parameterValue("p") == .int(2))
        state.apply(tie)
        #expect(state.parameterValue("p") == .int(3))
    }

    @Test func displaysNeverResurrectADismissedTip() {
        var a = SimulatedDevice(id: "a", physical: 1000)
        var b = SimulatedDevice(id: "b", physical: 1000)
        a.make(.eligibility(tip: "t", state: .invalidated(.tipClosed)))
        b.physical = 5000  // later by the clock, yet only a display
        b.display("t")
        b.receive(a.log)
        a.receive(b.log)
        #expect(a.state.eligibility(of: "t") == .invalidated(.tipClosed))
        #expect(b.state == a.state)
    }

    @Test func displayCountsFromDevicesAddUpAndResetStartsANewEpoch() {
        var a = SimulatedDevice(id: "a", physical: 1000)
        var b = SimulatedDevice(id: "b", physical: 1000)
        a.display("t")
        a.display("t")
        b.display("t")
        a.receive(b.log)
        #expect(a.state.displayTotals(of: "t").count == 3)
        #expect(a.state.displayTotals(of: "t").duration == 4.5)
        a.make(.eligibility(tip: "t", state: .eligible))
        #expect(a.state.displayTotals(of: "t").count == 0)
        b.receive(a.log)
        b.display("t")
        a.receive(b.log)
        #expect(a.state.displayTotals(of: "t").count == 1)
        #expect(a.state.hasDisplayed("t"))
    }

    @Test func datastoreResetRemovesEarlierRecordsEvenIfTheyArriveLater() {
        var a = SimulatedDevice(id: "a", physical: 1000)
        var b = SimulatedDevice(id: "b", physical: 900)
        b.make(.parameter(id: "p", value: .int(1)))
        b.make(.donation(event: "e", id: "b:2", date: 900, info: nil))
        b.display("t")
        a.make(.datastoreReset)
        a.receive(b.log)
        #expect(a.state.parameterValue("p") == nil)
        #expect(a.state.donations(of: "e").isEmpty)
        #expect(!a.state.hasDisplayed("t"))
        b.receive(a.log)
        #expect(b.state == a.state)
        // Writes after the reset (by HLC) survive it.
        b.make(.parameter(id: "p", value: .int(2)))
        a.receive(b.log)
        #expect(a.state.parameterValue("p") == .int(2))
    }

    @Test func donationLimitSelectsDeterministically() {
        var changes: [Change] = []
        for index in 0..<20 {
            changes.append(
                Change(
                    device: index % 2 == 0 ? "a" : "b", seq: Int64(index + 1),
                    hlc: HLC(milliseconds: 100, counter: UInt16(index)),
                    operation: .donation(event: "e", id: "x\(index)", date: Int64(index % 7), info: nil)))
        }
        let limits = ["e": DonationLimit(maximumCount: 5)]
        var rng = SeededGenerator(seed: 42)
        var first = ReplicaState()
        for change in changes { first.apply(change, donationLimits: limits) }
        var second = ReplicaState()
        for change in changes.shuffled(using: &rng) + changes.shuffled(using: &rng) {
            second.apply(change, donationLimits: limits)
        }
        #expect(first == second)
        // The limit is applied when read: the newest 5 by (date, id). Storage keeps what a later
        // deletion could still reveal (DonationLimitMergeTests).
        let visible = StatusEvaluator(state: first, donationLimits: limits, now: 0).donations("e")
        #expect(visible.count == 5)
        #expect(visible.allSatisfy { $0.date >= 5 })
    }
}
