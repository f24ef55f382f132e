import Foundation
import Testing
import TipSync

@Suite struct CatalogTests {
    static func exampleCatalog() throws -> Catalog {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/catalog", withExtension: "json"))
        return try JSONCoding.decoder.decode(Catalog.self, from: Data(contentsOf: url))
    }

    @Test func exampleCatalogEvaluatesLikeTheSwiftTip() throws {
        let catalog = try Self.exampleCatalog()
        let clock = ManualClock()
        let replica = try makeReplica(clock: clock)
        try replica.load(catalog: catalog)
        #expect(replica.status(ofTip: "favorite") == .pending)
        try replica.setParameter("isLoggedIn", to: .bool(true))
        try replica.donate(event: "opened-detail", infos: [nil, nil, nil])
        try replica.donate(event: "viewed-yard", infos: [.object(["yardID": .int(7)]), .object(["yardID": .int(7)])])
        #expect(replica.status(ofTip: "favorite") == .available)
        // The JSON rules and the #Rule-built Swift tip are the same expressions.
        let json = try #require(replica.catalogTip("favorite")).rules
        let swift = FavoriteTip().rules.map(\.expression).map { rename($0) }
        #expect(json.map(\.json) == swift.map(\.json))
    }

    /// The Swift tip's parameter id is "FavoriteTip.isLoggedIn"; the catalog's is "isLoggedIn".
    func rename(_ expression: RuleExpression) -> RuleExpression {
        switch expression {
        case .compare(let op, .parameter, let rhs): .compare(op, .parameter("isLoggedIn"), rhs)
        default: expression
        }
    }

    @Test func transientCatalogParameterAndGroup() throws {
        let replica = try makeReplica()
        try replica.load(catalog: try Self.exampleCatalog())
        #expect(replica.status(ofTip: "upgrade") == .available)
        try replica.setParameter("inTrial", to: .bool(true))
        #expect(replica.status(ofTip: "upgrade") == .pending)
        #expect(try replica.localChanges().isEmpty)  // transient: not in the change log
        #expect(replica.displayFrequency == .daily)
        #expect(replica.catalogGroup("onboarding")?.tips == ["welcome", "favorite"])
    }

    struct WelcomeTip: Tip {
        var id: String { "welcome" }
        var title: String { "Welcome" }
        var actions: [Action] { Action(id: "tour", title: "Take the tour") }
    }

    /// A French Swift app shows the catalog's French strings (issue 56, protocol.md §13.10): the
    /// device's locale (`Locale.current` by default, `deviceContext` to change it) picks them
    /// through the fallback chain, field by field; the tip's own strings when none match.
    @Test func aFrenchAppShowsTheCatalogsFrenchStrings() throws {
        let replica = try makeReplica()
        let catalog = #"""
            {"tips": [{"id": "welcome", "title": "Welcome", "message": "Start here.",
              "actions": [{"id": "tour", "title": "Take the tour"}],
              "localizations": {"fr": {"title": "Bienvenue", "message": "Commencez ici.", "actions": {"tour": "Visiter"}},
                                "fr-CA": {"title": "Bienvenue chez nous"}}}]}
            """#
        _ = try replica.applyServerCatalog(Data(catalog.utf8), tag: "\"v1\"")
        replica.deviceContext.locale = "fr-CA"
        let content = WelcomeTip().content(in: replica)
        #expect(content.title == "Bienvenue chez nous")
        #expect(content.message == "Commencez ici.")
        #expect(content.actions.map(\.title) == ["Visiter"])
        #expect(WelcomeTip().content(in: replica, locale: "de").title == "Welcome")
        replica.deviceContext.locale = "fr_FR"
        #expect(WelcomeTip().content(in: replica).title == "Bienvenue")
    }

    /// protocol.md §4: `resetDatastore()` clears the transient values of the device it is called on;
    /// a `datastoreReset` merged from another device does not (transient values are local, never
    /// stamped, so no reset can be ordered against them).
    @Test func aResetClearsTransientValuesOnlyOnTheDeviceThatResets() throws {
        let clock = ManualClock()
        let phone = try makeReplica("phone", clock: clock)
        let laptop = try makeReplica("laptop", clock: clock)
        for replica in [phone, laptop] {
            try replica.load(catalog: try Self.exampleCatalog())
            try replica.setParameter("inTrial", to: .bool(true))
        }
        clock.advance(by: 1)
        try phone.resetDatastore()
        try exchange([phone, laptop])
        #expect(phone.parameterValue("inTrial") == .bool(false), "the catalog default, after the reset")
        #expect(laptop.parameterValue("inTrial") == .bool(true), "a merged reset leaves local values")
        #expect(phone.status(ofTip: "upgrade") == .available)
        #expect(laptop.status(ofTip: "upgrade") == .pending)
    }

    /// `maxDisplayCount` 2^53, 2^53 + 1 or 1e16 was stored and served, and the JavaScript client then
    /// refused the catalog (issue 59, item 5): one number model for catalogs on every side.
    @Test func catalogNumbersBeyondTheNumberModelAreRefusedNamingTheField() throws {
        for text in [
            #"{"tips":[{"id":"t","title":"T","options":{"maxDisplayCount":9007199254740992}}]}"#,
            #"{"tips":[{"id":"t","title":"T","options":{"maxDisplayCount":1e16}}]}"#,
            #"{"tips":[{"id":"t","title":"T","options":{"maxDisplayDuration":1e300}}]}"#,
            #"{"events":[{"id":"e","donationLimit":{"maximumCount":9007199254740993}}]}"#,
        ] {
            #expect(throws: (any Error).self, "\(text)") { try Catalog(validating: Array(text.utf8)) }
            do {
                _ = try Catalog(validating: Array(text.utf8))
            } catch {
                #expect(
                    String(describing: error).contains("maxDisplay")
                        || String(describing: error).contains("maximumCount"))
            }
        }
        let largest = try Catalog(
            validating: Array(#"{"tips":[{"id":"t","title":"T","options":{"maxDisplayCount":9007199254740991}}]}"#.utf8)
        )
        #expect(largest.tips[0].options.maxDisplayCount == 9_007_199_254_740_991)
    }

    @Test func invalidCatalogsAreRejectedWithTheReason() throws {
        let replica = try makeReplica()
        let badRule = Catalog(tips: [TipDefinition(id: "t", title: "T", rules: [.parameter("missing")])])
        #expect(throws: Catalog.ValidationError.self) { try replica.load(catalog: badRule) }
        let duplicate = Catalog(tips: [TipDefinition(id: "t", title: "A"), TipDefinition(id: "t", title: "B")])
        do {
            try replica.load(catalog: duplicate)
            Issue.record("duplicate ids accepted")
        } catch {
            #expect("\(error)" == "tips[1].id: 't' is already the id of tips[0]; ids must be unique")
        }
        #expect(throws: DecodingError.self) {
            try JSONCoding.decoder.decode(
                Catalog.self, from: Data(#"{"tips":[{"id":"t","title":"T","rules":[{"~":[1,2]}]}]}"#.utf8))
        }
        #expect(replica.catalogTips.isEmpty)
    }

    @Test func ruleJSONFormReadsEveryOperator() throws {
        let text = """
            {"or": [
              {"and": [{"!=": [{"param": "p"}, "x"]}, {"not": {"<": [1, 2]}}]},
              {">": [{"count": {"largestSubset": [{"donatedWithin": [{"donations": "e"}, "week"]}, "k"]}}, {"+": [1, {"*": [2, 3]}]}]},
              {"contains": [{"smallestSubset": [{"donations": "e"}, "k"]}, {"<=": [{"field": "date"}, {"-": [{"now": true}, 60]}]}]},
              {"==": [{"literal": [1, 2]}, {"/": [4, 2]}]}
            ]}
            """
        let expression = try JSONCoding.decoder.decode(RuleExpression.self, from: Data(text.utf8))
        let reencoded = try JSONCoding.decoder.decode(RuleExpression.self, from: JSONCoding.encoder.encode(expression))
        #expect(reencoded == expression)
        for bad in [
            #"{"count": 1, "extra": 2}"#, #"{"donatedWithin": [{"donations": "e"}, "fortnight"]}"#, #"[1, 2]"#,
            #"{"==": [1]}"#,
        ] {
            #expect(throws: DecodingError.self) {
                try JSONCoding.decoder.decode(RuleExpression.self, from: Data(bad.utf8))
            }
        }
    }

    @Test func typeErrorsInDataRulesMakeTheRuleFalseNotACrash() throws {
        let replica = try makeReplica()
        let tip = TipDefinition(
            id: "t", title: "T", rules: [.compare(.equal, .count(.literal(.int(3))), .literal(.int(1)))])
        #expect(replica.status(of: tip) == .pending)
    }
}
