import Foundation
import Testing
import TipSyncCore

@testable import TipSyncAgent

/// What loading the catalog says: "accepted", or the error as the agent prints it.
func catalogMessage(_ json: String) -> String {
    do {
        _ = try AgentStore.decodeCatalog(Data(json.utf8), name: "catalog.json")
        return "accepted"
    } catch {
        return "\(error)"
    }
}

/// A well-formed catalog with an unknown value is refused naming the field and the value, never as
/// "malformed JSON" (issue 12, defect 7).
@Suite struct CatalogErrorTests {
    func message(_ json: String) -> String { catalogMessage(json) }

    @Test func unknownDisplayFrequencyNamesTheFieldAndValue() {
        let text = message(#"{"displayFrequency": "fortnightly"}"#)
        #expect(text.contains("displayFrequency"))
        #expect(text.contains("fortnightly"))
        #expect(!text.contains("malformed"))
    }

    @Test func unknownRuleOperatorNamesTheRule() {
        let text = message(#"{"tips": [{"id": "t", "title": "T", "rules": [{"~": [1, 2]}]}]}"#)
        #expect(text.contains("tips[0].rules[0]"))
        #expect(text.contains("unknown rule operator '~'"))
        #expect(!text.contains("malformed"))
    }

    @Test func brokenJSONIsStillCalledThat() {
        let text = message(#"{"tips": ["#)
        #expect(text.contains("malformed JSON at byte 10"))
    }

    @Test func undeclaredEventIsRefusedLikeAnUndeclaredParameter() {
        let text = message(
            #"{"tips": [{"id": "t", "title": "T", "rules": [{">": [{"count": {"donations": "e"}}, 0]}]}]}"#)
        #expect(text.contains("tips[0].rules[0]: reads event 'e', which the catalog's events do not declare"))
    }

    @Test func negativeOrNonNumericLimitsAreRefused() {
        #expect(message(#"{"displayFrequency": -5}"#).contains("displayFrequency"))
        #expect(message(#"{"events": [{"id": "e", "donationLimit": {"maximumCount": -1}}]}"#).contains("maximumCount"))
        #expect(
            message(#"{"tips": [{"id": "t", "title": "T", "options": {"maxDisplayDuration": -1}}]}"#)
                .contains("maxDisplayDuration"))
        #expect(
            message(#"{"tips": [{"id": "t", "title": "T", "rules": [{"donatedWithin": [{"donations": "e"}, -1]}]}]}"#)
                .contains("donatedWithin"))
    }
}

extension CatalogErrorTests {
    /// Canonically equivalent ids would be one record in Swift (String ==) and two elsewhere, so
    /// ids must be NFC (protocol.md §1).
    @Test func idsMustBeNFC() {
        #expect(message(#"{"tips": [{"id": "cafe\u0301", "title": "T"}]}"#).contains("normalization form C"))
        #expect(message(#"{"tips": [{"id": "caf\u00e9", "title": "T"}]}"#) == "accepted")
    }
}

/// Catalog errors name the field and speak JSON, never a Swift type or its range (issue 30).
@Suite struct CatalogFieldErrorTests {
    func message(_ json: String) -> String { catalogMessage(json) }

    @Test(arguments: [
        (
            #"{"groups": [{"id": "g", "priority": "x", "tips": []}]}"#,
            "groups[0].priority: unknown group priority 'x'; expected ordered or firstAvailable"
        ),
        (
            #"{"tips": [{"id": "a", "title": "A", "options": {"maxDisplayCount": 1.5}}]}"#,
            "tips[0].options.maxDisplayCount: expected an integer within ±9007199254740991, found 1.5"
        ),
        (
            #"{"tips": [{"id": "a", "title": "A", "options": {"maxDisplayCount": "x"}}]}"#,
            "tips[0].options.maxDisplayCount: expected an integer, found a string"
        ),
        (
            #"{"tips": [{"id": "a", "title": "A"}, {"id": "a", "title": "B"}]}"#,
            "tips[1].id: 'a' is already the id of tips[0]"
        ),
        (#"{"parameters": [{"id": ""}]}"#, "parameters[0].id: ids are not empty"),
        (#"{"events": [{"id": "e"}, {"id": "e"}]}"#, "events[1].id: 'e' is already the id of events[0]"),
        (
            #"{"tips": [{"id": "a", "title": "A"}], "groups": [{"id": "g", "tips": ["a", "b"]}]}"#,
            "groups[0].tips[1]: names tip 'b', which the catalog's tips do not declare"
        ),
        (
            #"{"tips": [{"id": "a", "title": "A", "rules": [true, {"param": "p"}]}]}"#,
            "tips[0].rules[1]: reads parameter 'p', which the catalog's parameters do not declare"
        ),
        (
            #"{"parameters": [{"id": "p", "default": {"\u00e9": 1, "e\u0301": 2}}]}"#,
            "parameters[0].default: member names"
        ),
    ])
    func namesTheField(_ json: String, _ expected: String) {
        let text = message(json)
        #expect(text.contains(expected), "\(text)")
        #expect(!text.contains("Int") && !text.contains("Swift") && !text.contains("9223372036854775807"))
    }

    @Test func aGroupWithoutPriorityIsOrdered() throws {
        let catalog = try AgentStore.decodeCatalog(
            Data(#"{"tips": [{"id": "a", "title": "A"}], "groups": [{"id": "g", "tips": ["a"]}]}"#.utf8),
            name: "catalog.json")
        #expect(catalog.groups.first?.priority == .ordered)
    }
}
