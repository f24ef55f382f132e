import Testing
import TipSyncCore
import TipSyncTestSupport

/// Donation limits must not make merging depend on the order of delivery (issue: convergence for
/// every client, defect 1). Found between two reference agents: W donates 500 times to an event
/// limited to 500, then (offline) deletes its donations; L meanwhile donates twice with older dates
/// but later stamps. Trimming on merge dropped L's donations on replicas that saw W's 500 first;
/// W's deletion then left those replicas with nothing and the others with L's two.
@Suite struct DonationLimitMergeTests {
    static let limit = DonationLimit(maximumCount: 500)
    static let limits = ["viewed": limit]

    static func change(_ device: String, _ seq: Int64, ms: UInt64, _ operation: Change.Operation) -> Change {
        Change(device: device, seq: seq, hlc: HLC(milliseconds: ms, counter: 0), operation: operation)
    }

    /// W's 500 donations (dates 2_000_000+), W's deletion (stamp 5_000), L's two older-dated donations
    /// stamped after the deletion (6_000).
    static var scenario: (w: [Change], deletion: Change, l: [Change]) {
        let w = (1...500).map { seq in
            change(
                "W", Int64(seq), ms: 1_000 + UInt64(seq),
                .donation(event: "viewed", id: "W:\(seq)", date: 2_000_000 + Int64(seq), info: nil))
        }
        let deletion = change("W", 501, ms: 5_000, .donationsDeleted(event: "viewed"))
        let l = (1...2).map { seq in
            change(
                "L", Int64(seq), ms: 6_000 + UInt64(seq),
                .donation(event: "viewed", id: "L:\(seq)", date: 1_000_000 + Int64(seq), info: nil))
        }
        return (w, deletion, l)
    }

    static func merged(_ changes: [Change]) -> ReplicaState {
        var state = ReplicaState()
        for change in changes { state.apply(change, donationLimits: limits) }
        return state
    }

    static func visible(_ state: ReplicaState) -> [String] {
        StatusEvaluator(state: state, donationLimits: limits, now: 3_000).donations("viewed").map(\.id)
    }

    @Test func theReportedDivergenceConvergesInEveryDeliveryOrder() {
        let (w, deletion, l) = Self.scenario
        let orders: [[Change]] = [
            w + l + [deletion],  // pulled before the deletion: L's donations arrive behind W's 500
            w + [deletion] + l,
            l + w + [deletion],
            [deletion] + l + w,
            (w + l).reversed() + [deletion],
        ]
        let states = orders.map(Self.merged)
        for state in states {
            #expect(state == states[0])
            #expect(Self.visible(state) == ["L:1", "L:2"])
        }
    }

    /// Until the deletion arrives, the limit shows the newest 500 (by date): W's.
    @Test func theLimitIsAppliedWhenReadNotWhenMerged() {
        let (w, _, l) = Self.scenario
        let state = Self.merged(w + l)
        #expect(Self.visible(state).count == 500)
        #expect(!Self.visible(state).contains("L:1"))
        #expect(state.events["viewed"]?.donations.count == 502)  // L's two are kept: a deletion may reveal them
    }

    /// Storage stays bounded: a donation outranked by `maximumCount` donations stamped no earlier
    /// can never be visible again (any deletion or reset that removes one of those removes it too).
    @Test func storageStaysBoundedForTheUsualStreamOfNewerDonations() {
        var state = ReplicaState()
        for seq in 1...2_000 {
            state.apply(
                Self.change(
                    "W", Int64(seq), ms: 1_000 + UInt64(seq),
                    .donation(event: "viewed", id: "W:\(seq)", date: Int64(seq), info: nil)),
                donationLimits: Self.limits)
        }
        #expect(state.events["viewed"]?.donations.count == 500)
        #expect(state.events["viewed"]?.donations.first?.id == "W:1501")
    }

    /// Random histories with limits, deletions and resets: every permutation gives the same state.
    @Test(arguments: 0..<40)
    func randomHistoriesWithLimitsCommute(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        var changes: [Change] = []
        var seqs: [String: Int64] = [:]
        let limits = ["viewed": DonationLimit(maximumCount: Int.random(in: 1...4, using: &random))]
        for _ in 0..<Int.random(in: 5...25, using: &random) {
            let device = ["A", "B", "C"].randomElement(using: &random)!
            let seq = seqs[device, default: 0] + 1
            seqs[device] = seq
            let ms = UInt64.random(in: 1_000...1_050, using: &random)
            let operation: Change.Operation
            switch Int.random(in: 0..<10, using: &random) {
            case 0: operation = .donationsDeleted(event: "viewed")
            case 1: operation = .datastoreReset
            default:
                operation = .donation(
                    event: "viewed", id: "\(device):\(seq)", date: Int64.random(in: 0...20, using: &random), info: nil)
            }
            changes.append(Self.change(device, seq, ms: ms, operation))
        }
        func merged(_ order: [Change]) -> ReplicaState {
            var state = ReplicaState()
            for change in order { state.apply(change, donationLimits: limits) }
            return state
        }
        let reference = merged(changes)
        for _ in 0..<20 {
            #expect(merged(changes.shuffled(using: &random)) == reference)
        }
        // Delivered twice, in batches reversed: the same.
        #expect(merged(changes.reversed() + changes) == reference)
    }
}
