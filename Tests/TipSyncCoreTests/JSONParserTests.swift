import Foundation
import Testing
import TipSyncTestSupport

@testable import TipSyncCore

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let text = #"""
             { "a": [1, -2, 3.5, 1e3, -0.25E-2, 9223372036854775807, 9223372036854775808],
              "s": "q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00 ok", "t": true, "f": false, "n": null, "o": {}, "e": [] }
            """#
        let value = try JSONParser.parse(text.utf8)
        #expect(
            value
                == .object([
                    "a": .array([
                        .int(1), .int(-2), .double(3.5), .double(1000), .double(-0.0025), .int(Int64.max),
                        .double(9_223_372_036_854_775_808),
                    ]),
                    "s": .string("q\"\\/\u{8}\u{c}\n\r\té😀 ok"), "t": .bool(true), "f": .bool(false), "n": .null,
                    "o": .object([:]), "e": .array([]),
                ]))
        // Integers stay integers (not doubles), as the canonical writer needs.
        if case .object(let members) = value, case .array(let numbers) = members["a"]! {
            if case .int = numbers[0] {} else { Issue.record("1 parsed as \(numbers[0])") }
        }
    }

    @Test func agreesWithFoundationOnGeneratedValues() throws {
        var random = SeededGenerator(seed: 99)
        for _ in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &random)
            #expect(try JSONParser.parse(value.canonicalText.utf8) == value)
            let pretty = try JSONEncoder().encode(value)
            #expect(try JSONParser.parse(pretty) == value)
            #expect(try JSONParser.parse(pretty) == JSONCoding.decoder.decode(JSONValue.self, from: pretty))
        }
    }

    /// A replica writes payloads with `appendCanonicalText(to:)` (no string each): the bytes it
    /// appends are exactly `canonicalText`'s, whatever the buffer held before, one-member objects
    /// (written without sorting keys) included.
    @Test func appendedCanonicalTextIsCanonicalText() {
        var random = SeededGenerator(seed: 7)
        var buffer: [UInt8] = Array("prefix".utf8)
        var values = (0..<300).map { _ in Self.randomValue(depth: 0, using: &random) }
        values += [
            .object(["only": .string("é\"\n")]), .object(["b": .int(1), "a": .object(["z": .null])]), .object([:]),
        ]
        for value in values {
            let before = buffer.count
            value.appendCanonicalText(to: &buffer)
            #expect(Array(buffer[before...]) == Array(value.canonicalText.utf8))
        }
        #expect(Array(buffer.prefix(6)) == Array("prefix".utf8))
        // A one-member object as the general path writes it (members sorted, nested ones too).
        #expect(JSONValue.object(["only": .string("é\"\n")]).canonicalText == #"{"only":"é\"\n"}"#)
        #expect(
            JSONValue.object(["x": .object(["b": .int(1), "a": .array([.double(1.5)])])]).canonicalText
                == #"{"x":{"a":[1.5],"b":1}}"#)
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":}", "{\"a\" 1}", "[1 2]", "01", "1.", "-", "1e", "tru", "nul", "\"abc",
        "\"\\x\"", "\"\\ud800\"", "\"a\nb\"", "[] []", "{\"a\":1,}", "NaN", "1e999",
    ])
    func refusesMalformedJSON(_ text: String) {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(text.utf8) }
    }

    @Test func refusesInvalidUTF8InsteadOfRepairingIt() throws {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        for invalid: [UInt8] in [[0xFF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] {
            // In a plain string, and in one that also has an escape (the slower path).
            #expect(throws: JSONParser.Error.self) { try JSONParser.parse([quote, 0x61] + invalid + [quote]) }
            #expect(throws: JSONParser.Error.self) {
                try JSONParser.parse([quote, backslash, UInt8(ascii: "n")] + invalid + [quote])
            }
        }
        // Valid multi-byte text passes through unchanged on both paths.
        #expect(try JSONParser.parse(Array("\"é😀\"".utf8)) == .string("é😀"))
        #expect(try JSONParser.parse(Array("\"é\\n😀\"".utf8)) == .string("é\n😀"))
    }

    @Test func refusesNestingBeyondTheLimit() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(deep.utf8) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? JSONParser.parse(fine.utf8)) != nil)
    }

    @Test func decodesTypesLikeJSONDecoderWithTheSameErrors() throws {
        let change = Change(
            device: "phone", seq: 3, hlc: HLC(milliseconds: 1_800_000_000_000, counter: 2),
            operation: .donation(event: "e", id: "phone:3", date: 5, info: .object(["k": .array([.int(1), .null])])))
        let data = Data(change.canonicalJSON.utf8)
        #expect(try JSONCoding.decode(Change.self, from: data) == JSONCoding.decoder.decode(Change.self, from: data))
        let catalog = try Data(
            contentsOf: URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Examples/catalog.json"))
        #expect(
            try JSONCoding.decode(Catalog.self, from: catalog) == JSONCoding.decoder.decode(Catalog.self, from: catalog)
        )
        // Wrong shapes: DecodingError with the path, as Foundation reports them.
        #expect {
            try JSONCoding.decode(Change.self, from: Data(#"{"device":"d","seq":"1"}"#.utf8))
        } throws: { error in
            guard case .typeMismatch(_, let context) = error as? DecodingError else { return false }
            return context.codingPath.map(\.stringValue) == ["seq"]
        }
        #expect {
            try JSONCoding.decode(Catalog.self, from: Data(#"{"tips":[{"id":"x"}]}"#.utf8))
        } throws: { error in
            guard case .keyNotFound(let key, let context) = error as? DecodingError else { return false }
            return key.stringValue == "title" && context.codingPath.map(\.stringValue) == ["tips", "0"]
        }
    }

    static func randomValue(depth: Int, using random: inout SeededGenerator) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int(Int64.random(in: -1_000_000...1_000_000, using: &random))
        case 3: return .double(Double(Int.random(in: -10_000...10_000, using: &random)) / 64 + 0.5)
        case 4:
            let pool = ["a", "é", "\"", "\\", "\n", "😀", "\u{1}", "tab\t", "/"]
            return .string(
                (0..<Int.random(in: 0..<5, using: &random)).map { _ in pool.randomElement(using: &random)! }.joined())
        case 5:
            return .array(
                (0..<Int.random(in: 0..<4, using: &random)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            var members: [String: JSONValue] = [:]
            for index in 0..<Int.random(in: 0..<4, using: &random) {
                members["k\(index)\(["", "é", "\""].randomElement(using: &random)!)"] = randomValue(
                    depth: depth + 1, using: &random)
            }
            return .object(members)
        }
    }
}
