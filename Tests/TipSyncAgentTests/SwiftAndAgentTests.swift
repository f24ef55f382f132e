import Foundation
import Testing
import TipSync
import TipSyncCore

@testable import TipSyncAgent

/// A tip declared in Swift, for an app.
struct EditorTip: Tip {
    var id: String { "editor" }
    var title: String { "Try the new editor" }
    @Parameter(id: "isLoggedIn") static var isLoggedIn: Bool = false
    @Parameter static var level: Int = 0
    static let edited = Event(id: "edited", donationLimit: DonationLimit(maximumCount: 4))

    var rules: [Rule] {
        #Rule(Self.$isLoggedIn) { $0 == true }
        #Rule(Self.$level) { $0 >= 1 }
        #Rule(Self.edited) { $0.donations.donatedWithin(.hours(1)).count >= 2 }
    }
    var options: [Option] { Tips.MaxDisplayCount(3) }
}

/// One catalog for every platform (issue 33): a Swift app and a `tipsync-agent` holding the catalog
/// exported from the app's declarations, on one account, share parameters and events by id and give
/// the same status for every state either of them makes.
@Suite struct SwiftAndAgentTests {
    @Test func anAppAndAnAgentWithTheExportedCatalogAgreeOnEveryState() async throws {
        var seen = Set<String>()
        for seed in UInt64(0)..<40 {
            await Task.yield()  // seconds of synchronous database writes: share the cooperative threads
            var random = SplitMix64(seed: seed)
            let clock = ManualClock()
            let app = try TipsReplica(
                directory: scratchDirectory().appendingPathComponent("app"), deviceID: "app", clock: clock.clock,
                environment: [:])
            let store = AgentStore(directory: scratchDirectory().appendingPathComponent("agent"))
            try store.initialize(
                AgentConfiguration(server: URL(string: "http://127.0.0.1:1")!, token: "ts_unused", device: "agent"))
            let exported = scratchDirectory().appendingPathComponent("catalog.json")
            try Data(try Tips.catalogJSON(of: [EditorTip()]).utf8).write(to: exported)
            let agent = try Agent(store: store, clock: clock.clock)
            _ = try agent.loadCatalog(from: exported)
            let tip = EditorTip()
            for _ in 0..<Int.random(in: 1...14, using: &random) {
                let onApp = Bool.random(using: &random)
                switch Int.random(in: 0..<6, using: &random) {
                case 0:
                    let value = JSONValue.bool(Bool.random(using: &random))
                    if onApp {
                        try app.setParameter(EditorTip.$isLoggedIn.id, to: value)
                    } else {
                        try agent.setParameter("isLoggedIn", to: value)
                    }
                case 1:
                    let value = JSONValue.int(Int64.random(in: 0...2, using: &random))
                    if onApp {
                        try app.setParameter(EditorTip.$level.id, to: value)
                    } else {
                        try agent.setParameter("EditorTip.level", to: value)
                    }
                case 2: if onApp { try app.donate(event: "edited") } else { try agent.donate(event: "edited") }
                case 3: if onApp { try app.recordDisplay(tip: "editor") } else { try agent.display(tip: "editor") }
                case 4: clock.advance(by: Double.random(in: 0...2400, using: &random))
                default:
                    if Int.random(in: 0..<3, using: &random) == 0 {
                        if onApp {
                            try app.invalidate(tip: "editor", reason: .actionPerformed)
                        } else {
                            try agent.invalidate(tip: "editor", reason: .tipClosed)
                        }
                    }
                }
                // One account: each merges what the other wrote (what their sync does).
                try app.applyRemote(try agent.replica.localChanges())
                try agent.replica.applyRemote(try app.localChanges())
                let swift = tip.status(in: app)
                let report = try agent.status(tip: "editor").tips[0]
                // An invalidated tip's reason is part of its protocol name; a pending one's says what holds it.
                let agentStatus =
                    report.status == "invalidated"
                    ? report.reason.map { "\(report.status):\($0)" } ?? "" : report.status
                #expect(swift.protocolName == agentStatus, "seed \(seed)")
                seen.insert(agentStatus)
            }
        }
        #expect(seen.count >= 3, "\(seen)")  // the states reached more than one status
    }
}

/// The README's export build step (issue 33): run it, load what it prints into an agent.
@Suite struct CatalogExportStepTests {
    @Test func theBuildStepsCatalogLoadsIntoAnAgent() async throws {
        let run = try await runTool("tipsync-export-example", [])
        #expect(run.status == 0, "\(run.stderr)")
        let file = scratchDirectory().appendingPathComponent("tips.json")
        try Data(run.stdout.utf8).write(to: file)
        let store = AgentStore(directory: scratchDirectory().appendingPathComponent("agent"))
        try store.initialize(
            AgentConfiguration(server: URL(string: "http://127.0.0.1:1")!, token: "ts_unused", device: "agent"))
        // Six seconds on: the first-sync hold of a store whose server never answered has passed.
        let agent = try Agent(store: store, clockOffset: 6)
        let catalog = try agent.loadCatalog(from: file)
        #expect(catalog.tips.map(\.id) == ["onboarding"] && catalog.displayFrequency == .daily)
        #expect(catalog.parameters.map(\.id) == ["isLoggedIn"] && catalog.events.map(\.id) == ["opened-inbox"])
        #expect(try agent.status(tip: "onboarding").tips[0].status == "pending")
        try agent.setParameter("isLoggedIn", to: .bool(true))
        for _ in 0..<3 { try agent.donate(event: "opened-inbox") }
        #expect(try agent.status(tip: "onboarding").tips[0].status == "available")
    }
}
