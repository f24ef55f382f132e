import Foundation
import Testing
import TipSync
import TipSyncCore

@testable import TipSyncAgent

/// Issue 73, items 3 and 4: a program using the agent could not show a tip — `status`, its JSON and
/// the socket gave only `id/status/reason/displayCount`, and the socket had no "why" — `reason` was
/// `null` for a pending tip held by an experiment or the off switch, and a tip for other platforms was
/// an "unknown tip". The report now carries the content in the device's locale (and variant), the
/// step that holds a pending tip, the socket answers `explain`, and another platform's tip says so.
@Suite struct AgentTipReportTests {
    /// An iOS device in French, in account `team` (bucket 282 of `v-7`: a variant).
    func agent(catalog: String) throws -> Agent {
        let store = AgentStore(directory: scratchDirectory().appendingPathComponent("store"))
        var configuration = AgentConfiguration(
            server: URL(string: "http://127.0.0.1:1")!, token: "ts_unused", device: "phone", firstSyncTimeout: 0)
        configuration.platform = "ios"
        configuration.locale = "fr-CA"
        try store.initialize(configuration)
        let agent = try Agent(store: store)
        let file = scratchDirectory().appendingPathComponent("catalog.json")
        try Data(catalog.utf8).write(to: file)
        _ = try agent.loadCatalog(from: file)
        try agent.replica.setAccount("team")
        return agent
    }

    static let catalog = #"""
        {"events": [{"id": "searched"}],
         "tips": [
           {"id": "welcome", "title": "Welcome", "message": "Hello", "image": "star",
            "actions": [{"id": "learn", "title": "Learn more"}],
            "localizations": {"fr": {"title": "Bienvenue", "message": "Bonjour", "actions": {"learn": "En savoir plus"}}}},
           {"id": "off", "title": "Off", "enabled": false},
           {"id": "trial", "title": "Trial",
            "experiment": {"id": "v-7", "holdout": 1, "goal": {"event": "searched"},
                           "variants": [{"id": "short", "title": "Court"}]}},
           {"id": "search", "title": "Search", "platforms": ["web", "linux"]}
         ]}
        """#

    @Test func theReportCarriesTheContentInTheDevicesLocaleAndVariant() throws {
        let agent = try agent(catalog: Self.catalog)
        let tips = Dictionary(uniqueKeysWithValues: try agent.status().tips.map { ($0.id, $0) })
        let welcome = try #require(tips["welcome"])
        #expect(welcome.title == "Bienvenue" && welcome.message == "Bonjour" && welcome.image == "star")
        #expect(welcome.actions == [ActionDefinition(id: "learn", title: "En savoir plus")])
        #expect(
            welcome.jsonLine
                == #"{"id":"welcome","status":"available","reason":null,"displayCount":0,"title":"Bienvenue","message":"Bonjour","image":"star","actions":[{"id":"learn","title":"En savoir plus"}]}"#
        )
        #expect(tips["trial"]?.title == "Court", "the account's variant")
        #expect(tips["search"] == nil, "another platform's tip is not listed")
    }

    @Test func aPendingTipSaysWhatHoldsIt() throws {
        let agent = try agent(catalog: Self.catalog)
        let off = try #require(try agent.status(tip: "off").tips.first)
        #expect(off.status == "pending" && off.reason == "turnedOff")
        #expect(off.statusText == "pending (turnedOff)")
        // The holdout: a catalog where `team` is held out of the experiment.
        let held = try self.agent(
            catalog: #"""
                {"events": [{"id": "searched"}],
                 "tips": [{"id": "search", "title": "Search",
                           "experiment": {"id": "search-7", "holdout": 10, "goal": {"event": "searched"}}}]}
                """#)
        let report = try #require(try held.status(tip: "search").tips.first)
        #expect(report.status == "pending" && report.reason == "experiment")
    }

    @Test func theSocketExplainsAndGivesContent() async throws {
        let handler = LocalAPIHandler(agent: try agent(catalog: Self.catalog))
        let explained = await handler.respond(
            to: try LocalAPIHandler.decode(Array(#"{"op":"explain","tip":"off"}"#.utf8)))
        let json = try JSONParser.parse(Array(explained.utf8))
        #expect(json["ok"] == .bool(true))
        guard case .array(let tips)? = json["tips"], let first = tips.first else {
            Issue.record("no tips in \(explained)")
            return
        }
        #expect(first["tip"] == .string("off") && first["reason"] == .string("turnedOff"))
        let status = await handler.respond(
            to: try LocalAPIHandler.decode(Array(#"{"op":"status","tip":"welcome"}"#.utf8)))
        #expect(status.contains(#""title":"Bienvenue""#))
    }

    @Test func aTipForOtherPlatformsIsNotForThisPlatformNotUnknown() async throws {
        let agent = try agent(catalog: Self.catalog)
        #expect(
            throws: AgentError(
                .notForThisPlatform, message: "search: not for this platform (web, linux; this device: ios)")
        ) {
            try agent.explanations(tip: "search")
        }
        let answer = await LocalAPIHandler(agent: agent).respond(
            to: try LocalAPIHandler.decode(Array(#"{"op":"explain","tip":"search"}"#.utf8)))
        #expect(answer.contains(#""code":"not-for-this-platform""#))
        #expect(throws: AgentError.self) { try agent.status(tip: "nothing") }
    }
}
