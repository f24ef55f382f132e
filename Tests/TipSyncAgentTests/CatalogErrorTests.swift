import Foundation
import Testing

@testable import TipSyncAgent

/// A well-formed catalog with an unknown value is refused naming the field and the value, never as
/// "malformed JSON" (issue 12, defect 7).
@Suite struct CatalogErrorTests {
    func message(_ json: String) -> String {
        do {
            _ = try AgentStore.decodeCatalog(Data(json.utf8), name: "catalog.json")
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

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
        #expect(text.contains("undeclared event 'e'"))
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
