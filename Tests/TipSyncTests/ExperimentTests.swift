import Foundation
import Synchronization
import Testing
import TipSyncCore
import TipSyncTestSupport

@testable import TipSync

/// A tip's experiment on a device (protocol.md §13.12): the holdout never shows it, asking whether to
/// show it records reach once per account, showing it in the treatment records exposure once.
@Suite struct ExperimentTests {
    /// carol's bucket for `experiment:search-holdout` is 2330 (held out at 25%), alice's 7191
    /// (`conformance/catalog/experiments.json`).
    static let catalog = try! Catalog(
        validating: Array(
            #"""
            {"events": [{"id": "searched"}], "parameters": [{"id": "ready", "default": true}],
             "tips": [{"id": "search", "title": "Search", "rules": [{"==": [{"param": "ready"}, true]}],
                       "experiment": {"id": "search-holdout", "holdout": 25, "goal": {"event": "searched"}}}]}
            """#.utf8))

    func replica(_ device: String, account: String?, clock: ManualClock = ManualClock()) throws -> TipsReplica {
        let replica = try makeReplica(
            device, clock: clock, directory: temporaryDirectory("experiment-\(device)-\(UUID())"))
        try replica.load(catalog: Self.catalog)
        if let account { try replica.setAccount(account) }
        return replica
    }

    func donations(_ replica: TipsReplica, _ event: String) throws -> [Change] {
        try replica.localChanges().filter {
            if case .donation(event, _, _, _) = $0.operation { true } else { false }
        }
    }

    @Test func aHeldOutAccountNeverSeesTheTipAndRecordsReachOnce() throws {
        let phone = try replica("phone", account: "carol")
        #expect(phone.displayStatus(ofTip: "search") == .pending)
        #expect(phone.displayStatus(ofTip: "search") == .pending)
        let reach = try donations(phone, "tipsync.reach:search-holdout")
        #expect(reach.count == 1)
        if case .donation(_, _, _, let info)? = reach.first?.operation {
            #expect(info == .object(["arm": .string("holdout"), "tip": .string("search")]))
        }
        let why = try #require(phone.explanation(ofTip: "search"))
        #expect(why.reason == .experiment(id: "search-holdout", arm: .holdout))
        #expect(why.json["arm"] == .string("holdout"))
        #expect(why.json["experiment"] == .string("search-holdout"))
    }

    @Test func readingStatusOrWhyRecordsNothing() throws {
        let phone = try replica("phone", account: "carol")
        #expect(phone.status(ofTip: "search") == .pending)
        _ = phone.explanation(ofTip: "search")
        #expect(try phone.localChanges().isEmpty)
    }

    @Test func aTipWhoseRulesDoNotHoldHasNotReachedAnyone() throws {
        let phone = try replica("phone", account: "carol")
        try phone.setParameter("ready", to: .bool(false))
        #expect(phone.displayStatus(ofTip: "search") == .pending)
        #expect(try donations(phone, "tipsync.reach:search-holdout").isEmpty)
    }

    @Test func aDeviceThatDoesNotKnowItsAccountHoldsTheTipAndRecordsNothing() throws {
        let phone = try replica("phone", account: nil)
        #expect(phone.displayStatus(ofTip: "search") == .pending)
        #expect(phone.explanation(ofTip: "search")?.reason == .experiment(id: "search-holdout", arm: nil))
        #expect(try phone.localChanges().isEmpty)
    }

    @Test func theTreatmentShowsTheTipAndRecordsReachThenExposureOnce() throws {
        let phone = try replica("phone", account: "alice")
        #expect(phone.displayStatus(ofTip: "search") == .available)
        try phone.recordDisplay(tip: "search")
        try phone.recordDisplay(tip: "search")
        #expect(try donations(phone, "tipsync.reach:search-holdout").count == 1)
        #expect(try donations(phone, "tipsync.exposure:search-holdout").count == 1)
        // Every change is valid protocol: what a server would accept.
        #expect(try phone.localChanges().allSatisfy { $0.violation == nil })
    }

    @Test func aDisplayWithoutAskingRecordsReachAndExposureInOneWrite() throws {
        let phone = try replica("phone", account: "alice")
        try phone.recordDisplay(tip: "search")
        let changes = try phone.localChanges()
        #expect(changes.map(\.seq) == [1, 2, 3])
        #expect(try donations(phone, "tipsync.reach:search-holdout").map(\.seq) == [2])
        #expect(try donations(phone, "tipsync.exposure:search-holdout").map(\.seq) == [3])
    }

    @Test func anotherDevicesReachMakesTheFirstAndNoSecondIsWritten() throws {
        let clock = ManualClock()
        let phone = try replica("phone", account: "carol", clock: clock)
        let laptop = try replica("laptop", account: "carol", clock: clock)
        _ = phone.displayStatus(ofTip: "search")
        try exchange([phone, laptop])
        clock.advance(by: 60)
        _ = laptop.displayStatus(ofTip: "search")
        #expect(try donations(laptop, "tipsync.reach:search-holdout").isEmpty)
        let experiment = try #require(Self.catalog.tips[0].experiment)
        #expect(ExperimentRecord.reach.first(of: experiment, in: laptop.state) != nil)
        #expect(
            ExperimentRecord.reach.first(of: experiment, in: laptop.state)
                == ExperimentRecord.reach.first(of: experiment, in: phone.state))
    }

    @Test func aStoppedExperimentHoldsNobodyOutAndRecordsNothing() throws {
        var catalog = Self.catalog
        catalog.tips[0].experiment?.stoppedAt = 1_700_000_000_000
        let phone = try makeReplica("phone", directory: temporaryDirectory("experiment-stopped-\(UUID())"))
        try phone.load(catalog: catalog)
        try phone.setAccount("carol")
        #expect(phone.displayStatus(ofTip: "search") == .available)
        try phone.recordDisplay(tip: "search")
        #expect(try phone.localChanges().count == 1)
    }

    /// What apps run: a view that follows the tip's status. The rule coming to hold moves a held-out
    /// tip from one `.pending` to another — the stream yields nothing new, yet reach is recorded.
    @Test func followingTheStatusRecordsReachWhenOnlyTheReasonChanges() async throws {
        let phone = try replica("phone", account: "carol")
        try phone.setParameter("ready", to: .bool(false))
        let tip = try #require(phone.catalogTip("search"))
        let recorded = AsyncStream<Void>.makeStream()
        let localChanges = phone.localChangeNotifications()
        let watcher = Task {
            for await _ in localChanges {
                if try phone.localChanges().contains(where: {
                    if case .donation("tipsync.reach:search-holdout", _, _, _) = $0.operation { true } else { false }
                }) {
                    recorded.continuation.yield()
                    return
                }
            }
        }
        var statuses = phone.displayStatusUpdates { tip }.makeAsyncIterator()
        #expect(await statuses.next() == .pending)
        try phone.setParameter("ready", to: .bool(true))
        var iterator = recorded.stream.makeAsyncIterator()
        await iterator.next()
        watcher.cancel()
        #expect(try donations(phone, "tipsync.reach:search-holdout").count == 1)
        #expect(phone.status(ofTip: "search") == .pending)
    }

    /// Variants (protocol.md §13.12): alice (bucket 7191 at 25% held out) is in `long`, dave (3808) in
    /// `short`; each sees its variant's content, and its records name its arm.
    @Test func aVariantAccountSeesItsContentAndRecordsItsArm() throws {
        let catalog = try Catalog(
            validating: Array(
                #"""
                {"events": [{"id": "searched"}],
                 "tips": [{"id": "search", "title": "Search", "message": "Find yards", "localizations": {"fr": {"title": "Recherche"}},
                           "experiment": {"id": "search-holdout", "holdout": 25, "goal": {"event": "searched"},
                                          "variants": [{"id": "short", "title": "Search!"},
                                                       {"id": "long", "message": "Find any yard by its name",
                                                        "localizations": {"fr": {"message": "Trouvez un jardin"}}}]}}]}
                """#.utf8))
        let tip = catalog.tips[0]
        #expect(tip.experiment?.arm(account: "alice") == TipExperiment.Arm(rawValue: "long"))
        #expect(tip.experiment?.arm(account: "dave") == TipExperiment.Arm(rawValue: "short"))
        #expect(tip.experiment?.arm(account: "carol") == .holdout)
        #expect(tip.experiment?.arms.map(\.rawValue) == ["holdout", "short", "long"])
        // A variant that gives text without localizations shows it in every locale.
        #expect(tip.content(for: "dave").localized(for: "fr").title == "Search!")
        #expect(tip.content(for: "dave").localized(for: "fr").message == "Find yards")
        // One with localizations replaces the tip's: the tip's French title is gone with them.
        let long = tip.content(for: "alice")
        #expect(long.localized(for: "fr").message == "Trouvez un jardin")
        #expect(long.localized(for: "fr").title == "Search")
        #expect(long.localized(for: "en").message == "Find any yard by its name")
        #expect(tip.content(for: "carol") == tip && tip.content(for: nil) == tip)

        let phone = try makeReplica("phone", directory: temporaryDirectory("experiment-variant-\(UUID())"))
        try phone.load(catalog: catalog)
        try phone.setAccount("alice")
        #expect(phone.displayStatus(ofTip: "search") == .available)
        try phone.recordDisplay(tip: "search")
        for event in ["tipsync.reach:search-holdout", "tipsync.exposure:search-holdout"] {
            let records = try donations(phone, event)
            #expect(records.count == 1)
            if case .donation(_, _, _, let info)? = records.first?.operation {
                #expect(info == .object(["arm": .string("long"), "tip": .string("search")]), "\(event)")
            }
        }
    }

    /// A group that would show a held-out tip shows nothing (`.ordered`) and records the tip's reach;
    /// in the treatment it shows the tip and records it too.
    @Test func showingAGroupReachesTheTipItWouldShow() async throws {
        let phone = try replica("phone", account: "carol")
        let tip = try #require(phone.catalogTip("search"))
        let evaluator = phone.core.withLock { phone.evaluator($0) }
        #expect(evaluator.currentTip(of: [tip], priority: .ordered) == nil)
        #expect(evaluator.tipReachedInGroup(of: [tip], priority: .ordered) == tip)
        let changes = phone.localChangeNotifications()
        var updates = phone.currentTipUpdates(of: { [tip] }, priority: .ordered).makeAsyncIterator()
        #expect(await updates.next() == .some(nil))
        var notifications = changes.makeAsyncIterator()
        while try donations(phone, "tipsync.reach:search-holdout").isEmpty { await notifications.next() }
        #expect(try donations(phone, "tipsync.reach:search-holdout").count == 1)

        let treated = try replica("laptop", account: "alice")
        let shown = try #require(treated.catalogTip("search"))
        let treatedEvaluator = treated.core.withLock { treated.evaluator($0) }
        #expect(treatedEvaluator.currentTip(of: [shown], priority: .ordered) == shown)
        #expect(treatedEvaluator.tipReachedInGroup(of: [shown], priority: .firstAvailable) == shown)
        // A tip whose rules do not hold is reached by no group.
        try phone.setParameter("ready", to: .bool(false))
        let ruled = phone.core.withLock { phone.evaluator($0) }
        #expect(ruled.tipReachedInGroup(of: [tip], priority: .ordered) == nil)
    }
}
