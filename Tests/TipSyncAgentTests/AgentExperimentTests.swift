import Foundation
import Testing
import TipSync
import TipSyncCore

@testable import TipSyncAgent

/// The agent's two ways an app asks whether to show a tip — `status` and `watch` (the CLI and the
/// local API) — record an experiment's reach (protocol.md §13.12); `status --why` only reads.
@Suite struct AgentExperimentTests {
    /// `team` is held out of `search-7` at 10% (bucket 282).
    func agent() throws -> Agent {
        // No first-sync hold: it would hold the tip (reason firstSync) before the experiment's step.
        let agent = try exampleAgent(firstSyncTimeout: 0)
        let file = scratchDirectory().appendingPathComponent("catalog.json")
        try Data(
            #"""
            {"events": [{"id": "searched"}],
             "tips": [{"id": "search", "title": "Search",
                       "experiment": {"id": "search-7", "holdout": 10, "goal": {"event": "searched"}}}]}
            """#.utf8
        ).write(to: file)
        _ = try agent.loadCatalog(from: file)
        try agent.replica.setAccount("team")
        return agent
    }

    func reaches(_ agent: Agent) throws -> Int {
        try agent.replica.localChanges().filter {
            if case .donation("tipsync.reach:search-7", _, _, _) = $0.operation { true } else { false }
        }.count
    }

    @Test func askingTheStatusRecordsReachOnceAndWhyRecordsNothing() throws {
        let agent = try agent()
        _ = try agent.explanations(tip: "search")
        #expect(try reaches(agent) == 0)
        #expect(try agent.status(tip: "search").tips.first?.status == "pending")
        _ = try agent.status(tip: "search")
        #expect(try reaches(agent) == 1)
    }

    @Test func watchingTheTipRecordsReach() async throws {
        let agent = try agent()
        let changed = agent.replica.localChangeNotifications()
        var reports = try agent.watch(tip: "search").makeAsyncIterator()
        #expect(await reports.next()?.status == "pending")
        var notifications = changed.makeAsyncIterator()
        while try reaches(agent) == 0 { await notifications.next() }
        #expect(try reaches(agent) == 1)
    }
}
