import Foundation
import Testing
import TipSyncCore

@testable import TipSync

/// One catalog for every platform (issue 33): Swift declarations export the §13 catalog with the
/// same ids, and it evaluates as the Swift tips do.
struct ExportedTip: Tip {
    var id: String { "exported" }
    var title: String { "Try the new editor" }
    var message: String? { "It saves as you type." }
    var image: String? { "pencil" }
    var actions: [Action] { Action(id: "open", title: "Open it") }

    @Parameter(id: "isLoggedIn") static var isLoggedIn: Bool = false
    @Parameter static var level: Int = 0
    static let edited = Event(id: "edited", donationLimit: DonationLimit(maximumCount: 5, maximumAge: 3600))

    var rules: [Rule] {
        #Rule(Self.$isLoggedIn) { $0 == true }
        #Rule(Self.$level) { $0 >= 2 }
        #Rule(Self.edited) { $0.donations.donatedWithin(.minutes(30)).count >= 3 }
    }
    var options: [Option] {
        Tips.MaxDisplayCount(4)
    }
}

@Suite struct CatalogExportTests {
    @Test func swiftDeclarationsExportTheCatalogWithTheSameIds() throws {
        let catalog = try Tips.catalog(of: [ExportedTip(), FavoriteTip()], displayFrequency: .daily)
        #expect(catalog.tips.map(\.id) == ["exported", "favorite"])
        #expect(catalog.parameters.map(\.id) == ["isLoggedIn", "ExportedTip.level", "FavoriteTip.isLoggedIn"])
        #expect(catalog.parameters.first { $0.id == "ExportedTip.level" }?.defaultValue == .int(0))
        #expect(
            catalog.events.first { $0.id == "edited" }?.donationLimit
                == DonationLimit(maximumCount: 5, maximumAge: 3600))
        let tip = try #require(catalog.tips.first)
        #expect(tip.title == "Try the new editor" && tip.message == "It saves as you type." && tip.image == "pencil")
        #expect(tip.actions == [ActionDefinition(id: "open", title: "Open it")] && tip.options.maxDisplayCount == 4)
        // The JSON a build step writes reads back as the same catalog.
        let text = try Tips.catalogJSON(of: [ExportedTip(), FavoriteTip()], displayFrequency: .daily)
        #expect(try Catalog(validating: Array(text.utf8)) == catalog)
        #expect(text.contains(#""id":"isLoggedIn""#))
    }

    /// For random states, the Swift tip's status equals the exported catalog's as the core evaluates
    /// it — over states that reach every status, so the agreement is not that of two constants.
    @Test func theExportedCatalogEvaluatesAsTheSwiftTip() throws {
        var seen = Set<TipStatus>()
        for seed in UInt64(0)..<150 { seen.insert(try Self.compare(seed: seed)) }
        #expect(seen.contains(.available) && seen.contains(.pending))
        #expect(seen.contains(.invalidated(.tipClosed)) && seen.contains(.invalidated(.displayCountExceeded)))
    }

    static func compare(seed: UInt64) throws -> TipStatus {
        var random = SplitMix64(seed: seed)
        let clock = ManualClock()
        let replica = try makeReplica(clock: clock)
        let tip = ExportedTip()
        let definition = tip.register(in: replica)
        let catalog = try Tips.catalog(of: [tip])
        for _ in 0..<Int.random(in: 0...16, using: &random) {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: try replica.setParameter("isLoggedIn", to: .bool(Bool.random(using: &random)))
            case 1: try replica.setParameter("ExportedTip.level", to: .int(Int64.random(in: 0...3, using: &random)))
            case 2: try replica.donate(event: "edited")
            case 3: try replica.recordDisplay(tip: "exported", duration: 1)
            case 4: clock.advance(by: Double.random(in: 0...1200, using: &random))
            default:
                if Int.random(in: 0..<4, using: &random) == 0 {
                    try replica.invalidate(tip: "exported", reason: .tipClosed)
                }
            }
        }
        let now = clock.now.timeIntervalSince1970
        let swift = replica.status(of: definition)
        let core = StatusEvaluator(state: replica.state, catalog: catalog, now: now).status(of: catalog.tips[0])
        #expect(swift == core, "seed \(seed)")
        return swift
    }
}

/// A Swift replica that follows the server's catalog (issue 33): the server's tip of the same id
/// overrides a tip declared in code — rules, options, content — and catalog-only tips are added.
@Suite struct ServerCatalogOverrideTests {
    @Test func theServersTipOverridesTheDeclaredOne() async throws {
        let replica = try makeReplica()
        let tip = ExportedTip()
        #expect(tip.status(in: replica) == .pending)  // not logged in, level 0
        var updates = tip.statusUpdates(in: replica).makeAsyncIterator()
        #expect(await updates.next() == .pending)
        let served =
            #"{"tips": [{"id": "exported", "title": "Served", "options": {"maxDisplayCount": 1}}, {"id": "only-on-server", "title": "New"}]}"#
        try replica.applyServerCatalog(Data(served.utf8), tag: "\"v1\"")
        #expect(tip.status(in: replica) == .available)
        #expect(await updates.next() == .available)
        #expect(replica.status(ofTip: "only-on-server") == .available)
        // The server's options apply too: one display reaches its maxDisplayCount of 1.
        try replica.recordDisplay(tip: "exported")
        #expect(tip.status(in: replica) == .invalidated(.displayCountExceeded))
        // Loaded again at the next start, before any pull.
        let restarted = try TipsReplica(
            directory: replica.directory, deviceID: "device-a", clock: .system, environment: [:])
        #expect(tip.status(in: restarted) == .pending)
        #expect(try restarted.loadStoredServerCatalog())
        #expect(tip.status(in: restarted) == .invalidated(.displayCountExceeded))
    }

    /// Without following, a catalog loaded by the app never overrides a declared tip.
    @Test func anAppCatalogDoesNotOverrideDeclaredTips() throws {
        let replica = try makeReplica()
        try replica.load(catalog: Catalog(tips: [TipDefinition(id: "exported", title: "Catalog")]))
        #expect(ExportedTip().status(in: replica) == .pending)
    }
}
