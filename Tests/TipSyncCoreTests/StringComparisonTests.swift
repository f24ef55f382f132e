import Testing
import TipSyncCore

/// Strings compare by Unicode code point, as protocol.md says and every other language does; Swift's
/// `String ==` (canonical equivalence) made `{"==": ["e\u0301", "\u00e9"]}` hold on the agent only.
@Suite struct StringComparisonTests {
    func holds(_ json: String) throws -> Bool {
        let rule = try RuleExpression(json: try JSONParser.parse(Array(json.utf8)))
        return StatusEvaluator(state: ReplicaState(), now: 0).rulesHold([rule])
    }

    @Test func canonicallyEquivalentStringsAreDifferent() throws {
        #expect(try !holds(#"{"==": ["e\u0301", "\u00e9"]}"#))
        #expect(try holds(#"{"!=": ["e\u0301", "\u00e9"]}"#))
        #expect(try holds(#"{"==": ["\u00e9", "\u00e9"]}"#))
        #expect(JSONValue.string("e\u{301}") != JSONValue.string("\u{E9}"))
    }

    /// Order is code point order (= UTF-8 byte order): "e" + U+0301 sorts before U+00E9, and "Z" before "a".
    @Test func orderIsCodePointOrder() throws {
        #expect(try holds(#"{"<": ["e\u0301", "\u00e9"]}"#))
        #expect(try holds(#"{"<": ["Z", "a"]}"#))
        #expect(try holds(#"{">": ["\ud83d\ude00", "\uffff"]}"#))  // U+1F600 above U+FFFF (not UTF-16 order)
    }
}
