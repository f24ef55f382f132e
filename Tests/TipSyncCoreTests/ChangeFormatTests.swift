import Foundation
import Testing
import TipSyncCore

@Suite struct ChangeFormatTests {
    static let hlc = HLC(milliseconds: 1_700_000_000_000, counter: 1)

    static let examples: [Change] = [
        Change(device: "d", seq: 1, hlc: hlc, operation: .parameter(id: "T.p", value: .bool(true))),
        Change(device: "d", seq: 2, hlc: hlc, operation: .eligibility(tip: "t", state: .invalidated(.tipClosed))),
        Change(device: "d", seq: 3, hlc: hlc, operation: .eligibility(tip: "t", state: .eligible)),
        Change(
            device: "d", seq: 4, hlc: hlc,
            operation: .display(
                tip: "t", epoch: Stamp(hlc: hlc, device: "e"), count: 2, duration: 1.5, lastDisplayed: 9)),
        Change(
            device: "d", seq: 5, hlc: hlc,
            operation: .display(tip: "t", epoch: nil, count: 1, duration: 0, lastDisplayed: 9)),
        Change(
            device: "d", seq: 6, hlc: hlc,
            operation: .donation(event: "e", id: "d:6", date: 5, info: .object(["x": .int(1)]))),
        Change(device: "d", seq: 7, hlc: hlc, operation: .donation(event: "e", id: "d:7", date: 5, info: nil)),
        Change(device: "d", seq: 8, hlc: hlc, operation: .donationsDeleted(event: "e")),
        Change(device: "d", seq: 9, hlc: hlc, operation: .datastoreReset),
    ]

    @Test(arguments: examples) func everyKindRoundTrips(change: Change) throws {
        let data = try JSONCoding.encoder.encode(change)
        #expect(try JSONCoding.decoder.decode(Change.self, from: data) == change)
    }

    @Test func wireFormIsFlatWithAKind() throws {
        let text = String(decoding: try JSONCoding.encoder.encode(Self.examples[1]), as: UTF8.self)
        #expect(
            text
                == #"{"device":"d","hlc":"018bcfe56800-0001","kind":"eligibility","reason":"tipClosed","seq":2,"state":"invalidated","tip":"t"}"#
        )
    }

    @Test func unknownKindsAndBadFieldsAreRejectedWithAClearMessage() {
        func decode(_ json: String) throws -> Change {
            try JSONCoding.decoder.decode(Change.self, from: Data(json.utf8))
        }
        #expect(throws: DecodingError.self) {
            try decode(#"{"device":"d","seq":1,"hlc":"018bcfe56800-0001","kind":"teleport"}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(#"{"device":"d","seq":1,"hlc":"yesterday","kind":"datastoreReset"}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(#"{"device":"d","seq":"one","hlc":"018bcfe56800-0001","kind":"datastoreReset"}"#)
        }
        do {
            _ = try decode(#"{"device":"d","seq":1,"hlc":"018bcfe56800-0001","kind":"teleport"}"#)
        } catch {
            #expect("\(error)".contains("unknown change kind 'teleport'"))
        }
    }
}

@Suite struct CanonicalJSONTests {
    @Test(arguments: ChangeFormatTests.examples) func canonicalJSONDecodesToTheSameChange(change: Change) throws {
        let decoded = try JSONCoding.decoder.decode(Change.self, from: Data(change.canonicalJSON.utf8))
        #expect(decoded == change)
    }

    @Test(arguments: ChangeFormatTests.examples)
    func canonicalJSONIsTheGenericCanonicalTextOfItsWireForm(change: Change) throws {
        // The change writer lists each kind's keys by hand; the generic writer sorts them. Same bytes.
        let wire = try JSONValue(parsing: String(decoding: JSONCoding.encoder.encode(change), as: UTF8.self))
        #expect(change.canonicalJSON == wire.canonicalText)
        #expect(try JSONValue(parsing: change.canonicalJSON) == wire)
    }

    @Test func stringsAreEscapedAndKeysSorted() throws {
        let value = JSONValue.object([
            "b": .string("quote \" backslash \\ newline \n tab \t bell \u{7} é"), "a": .double(2.5), "c": .double(3),
        ])
        #expect(value.canonicalText == #"{"a":2.5,"b":"quote \" backslash \\ newline \n tab \t bell \u0007 é","c":3}"#)
        // Every control character, and text on both sides of each escape.
        let controls = String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })
        #expect(
            JSONValue.string("a" + controls + "z").canonicalText
                == #""a\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#
                + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001fz""#
        )
        #expect(JSONValue.string("").canonicalText == #""""#)
        #expect(JSONValue.string("\"").canonicalText == #""\"""#)
        #expect(try JSONValue(parsing: value.canonicalText) == value)
    }
}
