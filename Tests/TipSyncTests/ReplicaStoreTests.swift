import Foundation
import GRDB
import Testing
import TipSync

@Suite struct ReplicaStoreTests {
    /// Makes some of everything on two devices and exchanges it.
    func populate(_ a: TipsReplica, _ b: TipsReplica, clock: ManualClock) throws {
        try a.setParameter("p", to: .string("x"))
        try a.donate(event: "e", info: .object(["n": .int(1)]))
        try b.donate(event: "e")
        try a.recordDisplay(tip: "t", duration: 2)
        try b.recordDisplay(tip: "t", duration: 3)
        clock.advance(by: 5)
        try b.invalidate(tip: "t", reason: .tipClosed)
        try a.resetEligibility(tip: "u")
        try a.recordDisplay(tip: "u")
        try b.deleteDonations(event: "gone")
        try exchange([a, b])
    }

    @Test func aReopenedReplicaKeepsAllState() throws {
        let clock = ManualClock()
        let directory = temporaryDirectory()
        let a = try makeReplica("a", clock: clock, directory: directory)
        let b = try makeReplica("b", clock: clock)
        try populate(a, b, clock: clock)
        let before = a.state
        let changes = try a.localChanges()
        // Every stamp that exists anywhere (own and observed); the clock restarts above all of them.
        let latest = try (changes + b.localChanges()).map(\.hlc).max()!

        let reopened = try makeReplica("ignored", clock: clock, directory: directory)
        #expect(reopened.deviceID == "a")
        #expect(reopened.state == before)
        #expect(try reopened.localChanges() == changes)
        #expect(reopened.latestHLC >= latest)
        // Sequence numbers continue where they stopped.
        try reopened.setParameter("p", to: .int(2))
        #expect(try reopened.localChanges().last?.seq == (changes.last?.seq ?? 0) + 1)
        #expect(try reopened.localChanges().last!.hlc > latest)
    }

    @Test func everyMutationIsAChangeLogEntryWithHLCAndSequence() throws {
        let replica = try makeReplica("dev")
        try replica.setParameter("p", to: .bool(true))
        try replica.donate(event: "e")
        try replica.recordDisplay(tip: "t", duration: 1)
        try replica.invalidate(tip: "t", reason: .actionPerformed)
        try replica.resetEligibility(tip: "t")
        try replica.deleteDonations(event: "e")
        try replica.resetDatastore()
        let log = try replica.localChanges()
        #expect(log.map(\.seq) == Array(1...7))
        #expect(log.allSatisfy { $0.device == "dev" })
        #expect(zip(log, log.dropFirst()).allSatisfy { $0.hlc < $1.hlc })
        #expect(
            log.map(\.kind) == [
                .parameter, .donation, .display, .eligibility, .eligibility, .donationsDeleted, .datastoreReset,
            ])
    }

    @Test func remoteChangesInAnyOrderGiveTheSameDatabase() throws {
        let clock = ManualClock()
        let a = try makeReplica("a", clock: clock)
        let b = try makeReplica("b", clock: clock)
        try populate(a, b, clock: clock)
        let all = try a.localChanges() + b.localChanges()
        var rng = SystemRandomNumberGenerator()
        let directories = (0..<3).map { _ in temporaryDirectory() }
        for directory in directories {
            let replica = try makeReplica("c", clock: clock, directory: directory)
            for change in all.shuffled(using: &rng) { try replica.applyRemote([change]) }
            try replica.applyRemote(all)  // duplicates change nothing
        }
        let states = try directories.map { try makeReplica("c", clock: clock, directory: $0).state }
        #expect(states.allSatisfy { $0 == a.state })
    }

    @Test func aFailedWriteLeavesDatabaseAndMemoryAsBefore() throws {
        let directory = temporaryDirectory()
        let replica = try makeReplica("a", directory: directory)
        try replica.setParameter("kept", to: .int(1))
        // Inject a failure in the middle of a batch: the second change's insert aborts.
        let pool = try DatabasePool(path: directory.appendingPathComponent("replica.sqlite").path)
        try pool.write { db in
            try db.execute(
                sql:
                    "CREATE TRIGGER poison BEFORE INSERT ON donation WHEN NEW.id = 'poison' BEGIN SELECT RAISE(ABORT, 'injected'); END"
            )
        }
        let hlc = HLC(milliseconds: 1_800_000_000_000, counter: 0)
        let batch = [
            Change(device: "b", seq: 1, hlc: hlc, operation: .parameter(id: "lost", value: .int(2))),
            Change(device: "b", seq: 2, hlc: hlc, operation: .donation(event: "e", id: "poison", date: 1, info: nil)),
        ]
        let before = replica.state
        #expect(throws: (any Error).self) { try replica.applyRemote(batch) }
        #expect(replica.state == before)
        #expect(try makeReplica("a", directory: directory).state == before)
    }

    @Test func datastoreResetClearsEverythingAndSurvivesReopen() throws {
        let directory = temporaryDirectory()
        let replica = try makeReplica("a", directory: directory)
        try replica.setParameter("p", to: .int(1))
        try replica.donate(event: "e")
        try replica.invalidate(tip: "t", reason: .tipClosed)
        try replica.resetDatastore()
        #expect(replica.parameterValue("p") == .null)
        #expect(replica.state.donations(of: "e").isEmpty)
        #expect(replica.state.eligibility(of: "t") == nil)
        let reopened = try makeReplica("a", directory: directory)
        #expect(reopened.state == replica.state)
        #expect(reopened.state.datastoreReset != nil)
    }
}

@Suite struct RuleCacheTests {
    @Test func cachedEvaluationAlwaysEqualsAFreshScan() throws {
        let clock = ManualClock()
        let replica = try makeReplica(clock: clock)
        let tip = TipDefinition(
            id: "t", title: "T",
            rules: [
                .compare(
                    .greaterOrEqual,
                    .count(.filter(.donations("e"), .compare(.equal, .field("k"), .literal(.int(1))))),
                    .literal(.int(3))),
                .not(.contains(.donations("e"), .compare(.greater, .field("k"), .literal(.int(5))))),
            ])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<60 {
            try replica.donate(event: "e", info: .object(["k": .int(Int64.random(in: 0...6, using: &generator))]))
            clock.advance(by: 1)
            let fresh = StatusEvaluator(state: replica.state, now: clock.now.timeIntervalSince1970).status(of: tip)
            #expect(replica.status(of: tip) == fresh)
            #expect(replica.status(of: tip) == fresh)  // the second call is served from the cache
        }
    }
}
