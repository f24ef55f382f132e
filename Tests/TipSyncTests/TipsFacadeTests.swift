import Foundation
import Testing
import TipSync

/// The global `Tips` facade: one shared replica per process, so these run one at a time.
@Suite(.serialized) struct TipsFacadeTests {
    init() { Tips.unconfigure() }

    @Test func tipKitCodePortsAsIs() async throws {
        defer { Tips.unconfigure() }
        let directory = temporaryDirectory()
        let clock = ManualClock()
        try Tips.configure([.displayFrequency(.immediate), .datastoreLocation(.url(directory)), .clock(clock.clock)])
        let tip = FavoriteTip()
        #expect(tip.status == .pending)
        await FavoriteTip.openedDetail.donate()
        await FavoriteTip.openedDetail.donate()
        FavoriteTip.openedDetail.sendDonation()
        await FavoriteTip.viewedYard.donate(YardDonation(yardID: 7))
        await FavoriteTip.viewedYard.donate(YardDonation(yardID: 7))
        FavoriteTip.isLoggedIn = true
        #expect(FavoriteTip.isLoggedIn)
        #expect(tip.status == .available)
        #expect(tip.shouldDisplay)
        tip.recordDisplay(duration: 4)
        tip.invalidate(reason: .tipClosed)
        #expect(tip.status == .invalidated(.tipClosed))
        await tip.resetEligibility()
        #expect(tip.status == .available)
        #expect(throws: TipsError.alreadyConfigured) { try Tips.configure() }
    }

    @Test func parametersReadDefaultsBeforeConfigure() {
        #expect(FavoriteTip.isLoggedIn == false)
        #expect(FavoriteTip().status == .pending)
    }

    @Test func resetDatastoreBeforeConfigureClearsTheStore() throws {
        defer { Tips.unconfigure() }
        let directory = temporaryDirectory()
        try Tips.configure([.datastoreLocation(.url(directory))])
        FavoriteTip.isLoggedIn = true
        FavoriteTip().invalidate(reason: .actionPerformed)
        Tips.unconfigure()

        try Tips.configure([.datastoreLocation(.url(directory))])
        #expect(FavoriteTip.isLoggedIn)
        #expect(FavoriteTip().status == .invalidated(.actionPerformed))
        Tips.unconfigure()

        try Tips.resetDatastore()
        try Tips.configure([.datastoreLocation(.url(directory))])
        #expect(FavoriteTip.isLoggedIn == false)
        #expect(FavoriteTip().status == .pending)
    }

    @Test func testingOverridesBeforeAndAfterConfigure() throws {
        defer { Tips.unconfigure() }
        struct Never: Tip {
            @Parameter static var never: Bool = false
            var title: String { "Never" }
            var rules: [Rule] { #Rule(Self.$never) { $0 } }
        }
        Tips.showTipsForTesting([Never.self])
        try Tips.configure([.datastoreLocation(.url(temporaryDirectory()))])
        #expect(Never().status == .available)
        Tips.unconfigure()
        try Tips.configure([.datastoreLocation(.url(temporaryDirectory()))])
        Tips.showAllTipsForTesting()
        Tips.hideTipsForTesting([Never.self])
        #expect(Never().status == .pending)
        Tips.unconfigure()
        try Tips.configure([.datastoreLocation(.url(temporaryDirectory()))])
        Tips.hideAllTipsForTesting()
        #expect(FavoriteTip().status == .pending)
    }

    /// TipKit's overrides apply by type: a tip whose `id` is custom ("favorite") is hidden or shown
    /// like one with the default id, before or after `configure`.
    @Test func testingOverridesApplyByTypeWhateverTheId() throws {
        defer { Tips.unconfigure() }
        try Tips.configure([.datastoreLocation(.url(temporaryDirectory()))])
        FavoriteTip.isLoggedIn = true
        Tips.showAllTipsForTesting()
        #expect(FavoriteTip().status == .available)
        Tips.hideTipsForTesting([FavoriteTip.self])
        #expect(FavoriteTip().status == .pending)
        Tips.unconfigure()

        struct Custom: Tip {
            var id: String { "custom-id" }
            var title: String { "Custom" }
            @Parameter static var never: Bool = false
            var rules: [Rule] { #Rule(Self.$never) { $0 } }
        }
        Tips.showTipsForTesting([Custom.self])
        try Tips.configure([.datastoreLocation(.url(temporaryDirectory()))])
        #expect(Custom().status == .available)
        #expect(FavoriteTip().status == .pending)
    }

    @Test func groupCurrentTipThroughTheFacade() throws {
        defer { Tips.unconfigure() }
        struct A: Tip { var title: String { "A" } }
        struct B: Tip { var title: String { "B" } }
        try Tips.configure([.datastoreLocation(.url(temporaryDirectory()))])
        let group = TipGroup(.ordered) {
            A()
            B()
        }
        #expect(group.currentTip?.id == "A")
        A().invalidate(reason: .tipClosed)
        #expect(group.currentTip?.id == "B")
    }
}
