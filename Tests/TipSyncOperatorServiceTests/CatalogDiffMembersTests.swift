import Foundation
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 73, item 2: an off-switch flip, a translation change and an experiment's start were each
/// listed as "no change". Every member of a tip and of the catalog is named when it changes; the
/// members are taken from the model (a catalog and a tip with every member set, checked against the
/// model's properties), so a member added later is covered by this test or fails it.
@Suite struct CatalogDiffMembersTests {
    /// A tip with every member set, two ways.
    static let tips = [
        #"""
        {"id": "t", "title": "One", "message": "M1", "image": "star", "actions": [{"id": "a", "title": "A"}],
         "rules": [{"==": [{"param": "p"}, true]}], "options": {"maxDisplayCount": 3}, "enabled": true,
         "targeting": [{"==": [{"context": "platform"}, "ios"]}], "localizations": {"fr": {"title": "Un"}},
         "platforms": ["ios"],
         "experiment": {"id": "e1", "holdout": 10, "goal": {"actionPerformed": true}, "window": 3600, "stoppedAt": 5, "variants": [{"id": "v1"}]}}
        """#,
        #"""
        {"id": "t", "title": "Two", "message": "M2", "image": "bolt", "actions": [{"id": "b", "title": "B"}],
         "rules": [{"==": [{"param": "p"}, false]}], "options": {"maxDisplayCount": 4}, "enabled": false,
         "targeting": [{"==": [{"context": "platform"}, "web"]}], "localizations": {"fr": {"title": "Deux"}},
         "platforms": ["web"],
         "experiment": {"id": "e1", "holdout": 10, "goal": {"actionPerformed": true}, "window": 3600, "variants": [{"id": "v1"}, {"id": "v2"}]}}
        """#,
    ]

    static func object(_ text: String) throws -> [String: JSONValue] {
        guard case .object(let members) = try JSONParser.parse(Array(text.utf8)) else { throw CancellationError() }
        return members
    }

    static func text(_ members: [String: JSONValue]) -> String { JSONValue.object(members).canonicalText }

    @Test func everyMemberOfATipIsNamedWhenItChanges() throws {
        let one = try Self.object(Self.tips[0])
        let two = try Self.object(Self.tips[1])
        // Every property of the model is set in the fixture (a new member must be added here).
        let tip = try JSONValueDecoder().decode(TipDefinition.self, from: .object(one))
        let declared = Set(Mirror(reflecting: tip).children.compactMap(\.label))
        #expect(Set(CatalogDiff.members(tip).keys) == declared, "the fixture sets every member of TipDefinition")
        for member in declared.subtracting(["id"]).sorted() {
            var changed = one
            changed[member] = two[member]
            let old = try Catalog(
                validating: Array(
                    #"{"parameters": [{"id": "p", "default": false}], "tips": [\#(Self.text(one))]}"#.utf8))
            let new = try Catalog(
                validating: Array(
                    #"{"parameters": [{"id": "p", "default": false}], "tips": [\#(Self.text(changed))]}"#.utf8))
            let diff = CatalogDiff(from: old, to: new)
            #expect(diff.tipsChanged == [.init(tip: "t", fields: [member])], "\(member)")
            #expect(diff.summary == "changed t (\(member))")
        }
    }

    @Test func everyMemberOfTheCatalogIsNamedWhenItChanges() throws {
        let one = try Self.object(
            #"""
            {"enabled": true, "displayFrequency": "daily", "parameters": [{"id": "p", "default": false}],
             "events": [{"id": "e"}], "tips": [{"id": "t", "title": "T", "platforms": ["ios"]}],
             "groups": [{"id": "g", "tips": ["t"]}], "platformSettings": {"ios": {"displayFrequency": "weekly"}}}
            """#)
        let two = try Self.object(
            #"""
            {"enabled": false, "displayFrequency": "hourly", "parameters": [{"id": "q", "default": 1}],
             "events": [{"id": "f"}], "tips": [{"id": "t", "title": "T", "platforms": ["ios"]}],
             "groups": [{"id": "h", "tips": ["t"]}], "platformSettings": {"ios": {"displayFrequency": "monthly"}}}
            """#)
        let catalog = try Catalog(validating: Array(Self.text(one).utf8))
        let declared = Set(Mirror(reflecting: catalog).children.compactMap(\.label))
        #expect(Set(CatalogDiff.members(catalog).keys) == declared, "the fixture sets every member of Catalog")
        for member in declared.subtracting(["tips"]).sorted() {
            var changed = one
            changed[member] = two[member]
            let diff = CatalogDiff(from: catalog, to: try Catalog(validating: Array(Self.text(changed).utf8)))
            #expect(diff.otherChanges == [member], "\(member)")
            #expect(diff.tipsChanged.isEmpty && diff.tipsAdded.isEmpty && diff.tipsRemoved.isEmpty)
        }
    }

    /// The issue's three incidents, as operators made them.
    @Test func anOffSwitchATranslationAndAnExperimentStartAreNamed() throws {
        let base = try Catalog(
            validating: Array(#"{"tips": [{"id": "t", "title": "T", "localizations": {"fr": {"title": "T"}}}]}"#.utf8))
        let off = try Catalog(
            validating: Array(
                #"{"tips": [{"id": "t", "title": "T", "enabled": false, "localizations": {"fr": {"title": "T"}}}]}"#
                    .utf8))
        let translated = try Catalog(
            validating: Array(#"{"tips": [{"id": "t", "title": "T", "localizations": {"fr": {"title": "Té"}}}]}"#.utf8))
        let started = try Catalog(
            validating: Array(
                #"{"tips": [{"id": "t", "title": "T", "localizations": {"fr": {"title": "T"}}, "experiment": {"id": "x", "holdout": 10, "goal": {"actionPerformed": true}}}]}"#
                    .utf8))
        let allOff = try Catalog(
            validating: Array(
                #"{"enabled": false, "tips": [{"id": "t", "title": "T", "localizations": {"fr": {"title": "T"}}}]}"#
                    .utf8))
        #expect(CatalogDiff(from: base, to: off).summary == "changed t (enabled)")
        #expect(CatalogDiff(from: base, to: translated).summary == "changed t (localizations)")
        #expect(CatalogDiff(from: base, to: started).summary == "changed t (experiment)")
        #expect(CatalogDiff(from: base, to: allOff).summary == "enabled")
    }
}
