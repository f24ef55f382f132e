import Foundation
import Testing
import TipSync

@Suite struct TipKitAPITests {
    @Test func favoriteTipBecomesAvailableWhenAllRulesHold() throws {
        let clock = ManualClock()
        let replica = try makeReplica(clock: clock)
        let tip = FavoriteTip()
        #expect(tip.status(in: replica) == .pending)

        try FavoriteTip.$isLoggedIn.set(true, in: replica)
        for _ in 0..<3 { try FavoriteTip.openedDetail.donate(in: replica) }
        try FavoriteTip.viewedYard.donate(YardDonation(yardID: 7), in: replica)
        #expect(tip.status(in: replica) == .pending)  // only one donation for yard 7
        try FavoriteTip.viewedYard.donate(YardDonation(yardID: 3), in: replica)
        #expect(tip.status(in: replica) == .pending)
        try FavoriteTip.viewedYard.donate(YardDonation(yardID: 7), in: replica)
        #expect(tip.status(in: replica) == .available)

        // donatedWithin(.days(5)): after six days the opened-detail donations no longer count.
        clock.advance(by: 6 * 86_400)
        #expect(tip.status(in: replica) == .pending)
    }

    @Test func macroExpandsRulesToDataWithTheSameMeaning() throws {
        let rules = FavoriteTip().rules.map(\.expression)
        #expect(rules[0] == .compare(.equal, .parameter("FavoriteTip.isLoggedIn"), .literal(.bool(true))))
        #expect(
            rules[1]
                == .compare(
                    .greaterOrEqual, .count(.donatedWithin(.donations("opened-detail"), seconds: 432_000)),
                    .literal(.int(3))))
        #expect(
            rules[2]
                == .compare(
                    .greaterOrEqual,
                    .count(.filter(.donations("viewed-yard"), .compare(.equal, .field("yardID"), .literal(.int(7))))),
                    .literal(.int(3 - 1))))
        // Every Swift rule has a JSON form that reads back to the same expression.
        for rule in rules {
            let json = try JSONCoding.encoder.encode(rule)
            #expect(try JSONCoding.decoder.decode(RuleExpression.self, from: json) == rule)
        }
    }

    @Test func tipContentAndOptionsBecomeADefinition() {
        let definition = FavoriteTip().definition
        #expect(definition.id == "favorite")
        #expect(definition.title == "Save as a Favorite")
        #expect(definition.message == "Your favorites always appear at the top.")
        #expect(definition.image == "star")
        #expect(definition.actions == [ActionDefinition(id: "learn-more", title: "Learn More")])
        #expect(definition.options == TipOptions(maxDisplayCount: 3, ignoresDisplayFrequency: true))
    }

    @Test func tipIDDefaultsToTheTypeName() {
        struct PlainTip: Tip { var title: String { "Plain" } }
        #expect(PlainTip().id == "PlainTip")
    }

    @Test func aTipWithNoRulesIsAvailableUntilInvalidated() throws {
        struct NoRulesTip: Tip { var title: String { "Hi" } }
        let replica = try makeReplica()
        let tip = NoRulesTip()
        #expect(tip.status(in: replica) == .available)
        try tip.invalidate(reason: .actionPerformed, in: replica)
        #expect(tip.status(in: replica) == .invalidated(.actionPerformed))
    }

    @Test func maxDisplayCountOneInvalidatesAfterOneDisplay() throws {
        struct OnceTip: Tip {
            var title: String { "Once" }
            var options: [Option] { Tips.MaxDisplayCount(1) }
        }
        let replica = try makeReplica()
        #expect(OnceTip().status(in: replica) == .available)
        try OnceTip().recordDisplay(in: replica)
        #expect(OnceTip().status(in: replica) == .invalidated(.displayCountExceeded))
    }

    @Test func maxDisplayDurationInvalidatesAfterCumulativeTime() throws {
        struct ShortTip: Tip {
            var title: String { "Short" }
            var options: [Option] { Tips.MaxDisplayDuration(10) }
        }
        let replica = try makeReplica()
        try ShortTip().recordDisplay(duration: 4, in: replica)
        try ShortTip().recordDisplay(duration: 5, in: replica)
        #expect(ShortTip().status(in: replica) == .available)
        try ShortTip().recordDisplay(duration: 1, in: replica)
        #expect(ShortTip().status(in: replica) == .invalidated(.displayDurationExceeded))
    }

    @Test func invalidationBeatsRulesUntilResetEligibility() throws {
        struct CountedTip: Tip {
            var title: String { "Counted" }
            var options: [Option] { Tips.MaxDisplayCount(2) }
        }
        let replica = try makeReplica()
        let tip = CountedTip()
        try tip.recordDisplay(in: replica)
        try tip.invalidate(reason: .tipClosed, in: replica)
        #expect(tip.status(in: replica) == .invalidated(.tipClosed))
        try tip.recordDisplay(in: replica)  // a stale display cannot resurrect it
        #expect(tip.status(in: replica) == .invalidated(.tipClosed))
        try tip.resetEligibility(in: replica)
        #expect(tip.status(in: replica) == .available)  // and the display count starts over
        #expect(replica.displayTotals(ofTip: tip.id).count == 0)
        try tip.recordDisplay(in: replica)
        try tip.recordDisplay(in: replica)
        #expect(tip.status(in: replica) == .invalidated(.displayCountExceeded))
    }

    @Test func dailyFrequencyHoldsNewTipsButNotOnesThatIgnoreIt() throws {
        struct First: Tip { var title: String { "1" } }
        struct Second: Tip { var title: String { "2" } }
        struct Urgent: Tip {
            var title: String { "!" }
            var options: [Option] { Tips.IgnoresDisplayFrequency(true) }
        }
        let clock = ManualClock()
        let replica = try makeReplica(clock: clock)
        replica.displayFrequency = .daily
        #expect(Second().status(in: replica) == .available)
        try First().recordDisplay(in: replica)
        #expect(Second().status(in: replica) == .pending)  // never shown: throttled
        #expect(First().status(in: replica) == .available)  // already appeared: keeps appearing
        #expect(Urgent().status(in: replica) == .available)
        clock.advance(by: 86_400)
        #expect(Second().status(in: replica) == .available)
    }

    @Test func customDisplayFrequencyInterval() throws {
        struct First: Tip { var title: String { "1" } }
        struct Second: Tip { var title: String { "2" } }
        let clock = ManualClock()
        let replica = try makeReplica(clock: clock)
        replica.displayFrequency = .custom(90)
        try First().recordDisplay(in: replica)
        clock.advance(by: 89)
        #expect(Second().status(in: replica) == .pending)
        clock.advance(by: 1)
        #expect(Second().status(in: replica) == .available)
    }

    @Test func orderedGroupShowsBOnlyAfterAIsInvalidated() throws {
        struct TipA: Tip { var title: String { "A" } }
        struct TipB: Tip { var title: String { "B" } }
        let replica = try makeReplica()
        let group = TipGroup(.ordered) {
            TipA()
            TipB()
        }
        #expect(group.currentTip(in: replica)?.id == "TipA")
        try TipA().invalidate(reason: .tipClosed, in: replica)
        #expect(group.currentTip(in: replica)?.id == "TipB")
        try TipB().invalidate(reason: .actionPerformed, in: replica)
        #expect(group.currentTip(in: replica) == nil)
    }

    @Test func orderedGroupWaitsForAPendingFirstTip() throws {
        struct Gated: Tip {
            @Parameter static var ready: Bool = false
            var title: String { "Gated" }
            var rules: [Rule] { #Rule(Self.$ready) { $0 } }
        }
        struct Open: Tip { var title: String { "Open" } }
        let replica = try makeReplica()
        #expect(
            TipGroup(.ordered) {
                Gated()
                Open()
            }.currentTip(in: replica) == nil)
        #expect(
            TipGroup(.firstAvailable) {
                Gated()
                Open()
            }.currentTip(in: replica)?.id == "Open")
        try Gated.$ready.set(true, in: replica)
        #expect(
            TipGroup(.ordered) {
                Gated()
                Open()
            }.currentTip(in: replica)?.id == "Gated")
    }

    @Test func statusUpdatesEmitOnEveryChange() async throws {
        let replica = try makeReplica()
        struct Watched: Tip {
            @Parameter static var enabled: Bool = false
            var title: String { "Watched" }
            var rules: [Rule] { #Rule(Self.$enabled) { $0 == true } }
        }
        var updates = Watched().statusUpdates(in: replica).makeAsyncIterator()
        #expect(await updates.next() == .pending)
        try Watched.$enabled.set(true, in: replica)
        #expect(await updates.next() == .available)
        try Watched().invalidate(reason: .tipClosed, in: replica)
        #expect(await updates.next() == .invalidated(.tipClosed))
        try Watched().resetEligibility(in: replica)
        #expect(await updates.next() == .available)
    }

    @Test func statusUpdatesEmitForChangesFromOtherDevices() async throws {
        struct Shared: Tip { var title: String { "Shared" } }
        let phone = try makeReplica("phone")
        let laptop = try makeReplica("laptop")
        var updates = Shared().statusUpdates(in: laptop).makeAsyncIterator()
        #expect(await updates.next() == .available)
        try Shared().invalidate(reason: .tipClosed, in: phone)
        try laptop.applyRemote(try phone.localChanges())
        #expect(await updates.next() == .invalidated(.tipClosed))
    }

    @Test func groupCurrentTipUpdates() async throws {
        struct TipA: Tip { var title: String { "A" } }
        struct TipB: Tip { var title: String { "B" } }
        let replica = try makeReplica()
        var updates = TipGroup(.ordered) {
            TipA()
            TipB()
        }.currentTipUpdates(in: replica).makeAsyncIterator()
        #expect(await updates.next()??.id == "TipA")
        try TipA().invalidate(reason: .tipClosed, in: replica)
        #expect(await updates.next()??.id == "TipB")
    }

    @Test func transientParametersAreNotPersisted() throws {
        let directory = temporaryDirectory()
        do {
            let replica = try makeReplica(directory: directory)
            try FavoriteTip.$inTrial.set(true, in: replica)
            try FavoriteTip.$isLoggedIn.set(true, in: replica)
            #expect(FavoriteTip.$inTrial.value(in: replica) == true)
            #expect(try replica.localChanges().count == 1)  // only the persistent parameter
        }
        let reopened = try makeReplica(directory: directory)
        #expect(FavoriteTip.$inTrial.value(in: reopened) == false)
        #expect(FavoriteTip.$isLoggedIn.value(in: reopened) == true)
    }

    @Test func enumAndStringParametersCompareByValue() throws {
        enum Plan: String, Codable, Sendable { case free, pro }
        struct ProTip: Tip {
            @Parameter static var plan: Plan = .free
            @Parameter static var launches: Int = 0
            var title: String { "Pro" }
            var rules: [Rule] {
                #Rule(Self.$plan) { $0 == .pro }
                #Rule(Self.$launches) { $0 > 2 && $0 <= 10 }
            }
        }
        let replica = try makeReplica()
        try ProTip.$launches.set(3, in: replica)
        #expect(ProTip().status(in: replica) == .pending)
        try ProTip.$plan.set(.pro, in: replica)
        #expect(ProTip().status(in: replica) == .available)
        try ProTip.$launches.set(11, in: replica)
        #expect(ProTip().status(in: replica) == .pending)
    }

    @Test func orCompoundRule() throws {
        struct EitherTip: Tip {
            @Parameter static var a: Bool = false
            @Parameter static var b: Bool = false
            var title: String { "Either" }
            var rules: [Rule] {
                #Rule(Self.$a) { $0 } || #Rule(Self.$b) { $0 }
            }
        }
        let replica = try makeReplica()
        #expect(EitherTip().status(in: replica) == .pending)
        try EitherTip.$b.set(true, in: replica)
        #expect(EitherTip().status(in: replica) == .available)
    }

    @Test func testingOverridesFollowTipKitPrecedence() throws {
        struct Shown: Tip { var title: String { "S" } }
        struct Hidden: Tip { var title: String { "H" } }
        struct Other: Tip {
            @Parameter static var never: Bool = false
            var title: String { "O" }
            var rules: [Rule] { #Rule(Self.$never) { $0 } }
        }
        let replica = try makeReplica()
        try Shown().invalidate(reason: .tipClosed, in: replica)
        var overrides = TestingOverrides()
        overrides.shown = ["Shown"]
        overrides.hidden = ["Hidden", "Shown"]
        overrides.showAll = true
        overrides.hideAll = true
        replica.testingOverrides = overrides
        #expect(Shown().status(in: replica) == .available)  // show beats hide, and invalidation
        #expect(Hidden().status(in: replica) == .pending)  // hide beats showAll
        #expect(Other().status(in: replica) == .available)  // showAll beats hideAll and rules
    }

    @Test func testingOverridesFromEnvironment() throws {
        struct Any1: Tip {
            @Parameter static var never: Bool = false
            var title: String { "A" }
            var rules: [Rule] { #Rule(Self.$never) { $0 } }
        }
        let shown = try makeReplica(environment: ["TIPSYNC_SHOW_ALL_TIPS": "1"])
        #expect(Any1().status(in: shown) == .available)
        let hidden = try makeReplica(environment: ["TIPSYNC_HIDE_TIPS": "Any1, other"])
        #expect(Any1().status(in: hidden) == .pending)
        #expect(hidden.testingOverrides.hidden == ["Any1", "other"])
    }

    @Test func donationPayloadFieldsSubsetsAndContains() throws {
        struct Visit: Codable, Sendable {
            let yardID: Int
            let minutes: Double
        }
        struct YardTip: Tip {
            static let visited = Event<Visit>(id: "visited")
            var title: String { "Yard" }
            var rules: [Rule] {
                #Rule(Self.visited) { $0.donations.largestSubset(groupedBy: \.yardID).count >= 3 }
                #Rule(Self.visited) { $0.donations.contains { $0.minutes > 30 && $0.yardID != 1 } }
                #Rule(Self.visited) { !$0.donations.smallestSubset(groupedBy: \.yardID).isEmpty }
            }
        }
        let replica = try makeReplica()
        for yard in [1, 1, 1, 2] { try YardTip.visited.donate(Visit(yardID: yard, minutes: 10), in: replica) }
        #expect(YardTip().status(in: replica) == .pending)
        try YardTip.visited.donate(Visit(yardID: 2, minutes: 45), in: replica)
        #expect(YardTip().status(in: replica) == .available)
        let donations = YardTip.visited.donations(in: replica)
        #expect(donations.count == 5)
        #expect(donations.largestSubset(groupedBy: \.yardID).count == 3)
    }

    @Test func donationDatesAreReadableInRules() throws {
        struct RecentTip: Tip {
            static let opened = Event(id: "opened-recently")
            var title: String { "Recent" }
            var rules: [Rule] {
                #Rule(Self.opened) { $0.donations.filter { $0.date > Date.now.addingTimeInterval(-3600) }.count >= 1 }
            }
        }
        let clock = ManualClock()
        let replica = try makeReplica(clock: clock)
        try RecentTip.opened.donate(in: replica)
        #expect(RecentTip().status(in: replica) == .available)
        clock.advance(by: 3601)
        #expect(RecentTip().status(in: replica) == .pending)
    }

    @Test func eventsAreSharedByIDAcrossTips() throws {
        struct One: Tip {
            static let e = Event(id: "shared-event")
            var title: String { "1" }
            var rules: [Rule] { #Rule(Self.e) { $0.donations.count >= 2 } }
        }
        struct Two: Tip {
            static let e = Event(id: "shared-event")
            var title: String { "2" }
            var rules: [Rule] { #Rule(Self.e) { $0.donations.count >= 2 } }
        }
        let replica = try makeReplica()
        try One.e.donate(in: replica)
        try Two.e.donate(in: replica)
        #expect(One().status(in: replica) == .available)
        #expect(Two().status(in: replica) == .available)
    }

    @Test func donationLimitTrimsStorageAndQueriesSeeAtMost1000() throws {
        let limited = Tips.Event(id: "limited", donationLimit: .init(maximumCount: 5))
        let unlimited = Tips.Event(id: "unlimited")
        let clock = ManualClock()
        let replica = try makeReplica(clock: clock)
        for _ in 0..<8 {
            try limited.donate(in: replica)
            clock.advance(by: 1)
        }
        #expect(replica.state.donations(of: "limited").count == 5)
        try replica.donate(event: "unlimited", infos: Array(repeating: nil, count: 1200))
        #expect(replica.state.donations(of: "unlimited").count == 1200)
        #expect(unlimited.donations(in: replica).count == 1000)

        let aged = Tips.Event(id: "aged", donationLimit: .init(maximumAge: 60))
        try aged.donate(in: replica)
        clock.advance(by: 61)
        #expect(aged.donations(in: replica).isEmpty)
    }

    @Test func deleteDonationsRemovesThemEverywhere() throws {
        let a = try makeReplica("a")
        let b = try makeReplica("b")
        try a.donate(event: "e")
        try b.donate(event: "e")
        try exchange([a, b])
        #expect(a.state.donations(of: "e").count == 2)
        try a.deleteDonations(event: "e")
        try exchange([a, b])
        #expect(a.state.donations(of: "e").isEmpty)
        #expect(b.state.donations(of: "e").isEmpty)
    }
}

@Suite struct TimeDrivenStatusTests {
    @Test func refreshEmitsStatusChangesThatComeOnlyFromTimePassing() async throws {
        struct First: Tip { var title: String { "1" } }
        struct Second: Tip { var title: String { "2" } }
        let clock = ManualClock()
        let replica = try makeReplica(clock: clock)
        replica.displayFrequency = .hourly
        try First().recordDisplay(in: replica)
        var updates = Second().statusUpdates(in: replica).makeAsyncIterator()
        #expect(await updates.next() == .pending)
        clock.advance(by: 3600)
        replica.refresh()  // what the replica's own ticker does every two seconds
        #expect(await updates.next() == .available)
    }
}
