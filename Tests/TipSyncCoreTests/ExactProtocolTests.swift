import Foundation
import Testing
import TipSyncTestSupport

@testable import TipSyncCore

/// The second exact-protocol pass (issue 30): what the reference did differently from protocol.md,
/// or what the document left unwritten, now the same in both.
@Suite struct ExactProtocolTests {
    func change(_ json: String) throws -> Change {
        try JSONCoding.decode(Change.self, from: json.utf8)
    }

    /// Item 1: `{"é": "x", "e\u0301": "y"}` was answered 200 and served as `{"é": "y"}`.
    @Test(arguments: [
        (#"{"a": {"\u00e9": "x", "e\u0301": "y"}}"#, "a", false),
        (#"{"xe\u0301": 1, "x\u00e9": 2}"#, "", false),
        (#"{"list": [1, {"k": 1, "k": 2}]}"#, "list[1]", true),
        (#"{"changes": [{"v": {"deep": [{"\u212b": 1, "\u00c5": 2}]}}]}"#, "changes[0].v.deep[0]", false),
    ])
    func equalOrEquivalentMemberNamesAreRefusedWithTheirPath(_ text: String, _ path: String, _ equal: Bool) {
        #expect {
            try JSONParser.parse(text.utf8)
        } throws: { error in
            guard let error = error as? JSONParser.Error else { return false }
            return error.isDuplicateMemberName && error.path == path
                && error.message.contains(equal ? "two members are named" : "canonically equivalent")
        }
    }

    @Test func objectsCompareMemberNamesByCodePoint() {
        let nfc = JSONValue.object(["\u{e9}": .int(1)])
        let nfd = JSONValue.object(["e\u{301}": .int(1)])
        #expect(nfc != nfd)
        #expect(nfc == .object(["\u{e9}": .double(1)]))
    }

    /// Item 2: `"zz": 12345678901234567890123` in an unknown key was served as `1.2345678901234568e+22`.
    @Test(arguments: ["12345678901234567890123", "9223372036854775808", "9007199254740993", "1e300", "-1e300"])
    func unknownKeysObeyTheNumberModel(_ number: String) throws {
        let parsed = try change(
            #"{"device":"d","seq":1,"hlc":"018bcfe56800-0000","kind":"datastoreReset","zz":{"n":[\#(number)]}}"#)
        #expect(parsed.violation?.field == "zz.n[0]")
    }

    /// Item 9: `seq` is inside the number model like every other number.
    @Test func seqIsInsideTheNumberModel() throws {
        let top = try change(
            #"{"device":"d","seq":9007199254740991,"hlc":"018bcfe56800-0000","kind":"datastoreReset"}"#)
        #expect(top.violation == nil)
        let beyond = try change(
            #"{"device":"d","seq":9007199254740992,"hlc":"018bcfe56800-0000","kind":"datastoreReset"}"#)
        #expect(beyond.violation?.field == "seq")
    }

    /// Item 12: empty ids were accepted.
    @Test(arguments: [
        (#""kind":"parameter","id":"","value":1"#, "id"),
        (#""kind":"eligibility","tip":"","state":"eligible""#, "tip"),
        (#""kind":"donationsDeleted","event":"""#, "event"),
    ])
    func emptyIdsAreRefused(_ fields: String, _ field: String) throws {
        let parsed = try change(#"{"device":"d","seq":1,"hlc":"018bcfe56800-0000",\#(fields)}"#)
        #expect(parsed.violation?.field == field)
    }

    /// Item 10: `reason` on an `eligible` change was dropped; `"epoch": null` and unknown members
    /// inside `epoch` were dropped. The first is kept, the others are refused.
    @Test func aReasonOnEligibleIsKept() throws {
        let parsed = try change(
            #"{"device":"d","seq":1,"hlc":"018bcfe56800-0000","kind":"eligibility","tip":"t","state":"eligible","reason":"why"}"#
        )
        #expect(parsed.operation == .eligibility(tip: "t", state: .eligible))
        #expect(parsed.canonicalJSON.contains(#""reason":"why""#))
        #expect(try change(parsed.canonicalJSON) == parsed)
    }

    @Test(arguments: [
        #""epoch":null"#, #""epoch":{"hlc":"018bcfe56800-0000","device":"d","x":1}"#,
        #""epoch":{"hlc":"018bcfe56800-0000"}"#,
    ])
    func anEpochIsAbsentOrExactlyAStamp(_ epoch: String) {
        let text =
            #"{"device":"d","seq":1,"hlc":"018bcfe56800-0000","kind":"display","tip":"t",\#(epoch),"count":1,"duration":0,"lastDisplayed":0}"#
        #expect {
            try change(text)
        } throws: { error in
            guard let error = error as? DecodingError else { return false }
            return error.fieldPath == "epoch" && error.reason.hasPrefix("an epoch is an object with exactly")
        }
    }

    /// Item 12: `-0.0` and decimals with more digits than a double holds, written down.
    @Test func negativeZeroIsZeroAndDecimalsAreTheNearestDouble() throws {
        #expect(JSONValue.double(-0.0).canonicalText == "0")
        let long = try JSONValue(parsing: "0.1000000000000000055511151231257827")
        #expect(long.canonicalText == "0.1")
    }
}

/// Item 6: canonical JSON text is written exactly as protocol.md §1 says — ECMAScript's number
/// form and `JSON.stringify`'s string escapes — checked against Node, the JavaScript implementation.
@Suite struct CanonicalTextMatchesJavaScriptTests {
    static func node(_ script: String, input: String) async throws -> String {
        let file = Scratch.path("canonical", pathExtension: "json")
        try Data(input.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await ChildProcess.run("/usr/bin/env", ["node", "-e", script, file.path])
        #expect(result.status == 0, "node failed (Node 20 is on every machine): \(result.stderr)")
        return result.stdout
    }

    @Test func numbersAreWrittenAsECMAScriptWritesThem() async throws {
        var generator = SeededGenerator(seed: 30)
        var numbers: [Double] = [
            0.1, 1e-6, 1e-7, 1.5e-7, 123456789012.5, 4503599627370495.5, -2.5e-10, Double.leastNonzeroMagnitude,
            0.000123, 1e-10,
            Double.leastNormalMagnitude, 2.2250738585072014e-308, 1.7976931348623157e308, 1e21, 1e22, 9.5e20, -1e-5,
        ]
        for _ in 0..<3000 {
            let bits = UInt64.random(in: .min ... .max, using: &generator)
            let value = Double(bitPattern: bits)
            if value.isFinite { numbers.append(value) }
            numbers.append(Double.random(in: -1e6...1e6, using: &generator))
            numbers.append(
                Double.random(in: 0...1, using: &generator)
                    * pow(10, Double(Int.random(in: -30...30, using: &generator))))
        }
        // Node reads the exact bit patterns, so both sides write the same double.
        let input = numbers.map { String($0.bitPattern, radix: 16) }.joined(separator: "\n")
        let script = """
            const lines = require('fs').readFileSync(process.argv[1], 'utf8').split('\\n');
            const view = new DataView(new ArrayBuffer(8));
            console.log(lines.map(h => { view.setBigUint64(0, BigInt('0x' + h)); return JSON.stringify(view.getFloat64(0)); }).join('\\n'));
            """
        let javascript = try await Self.node(script, input: input).split(separator: "\n").map(String.init)
        try #require(javascript.count == numbers.count)
        var mismatches: [String] = []
        for (number, expected) in zip(numbers, javascript) {
            let ours = JSONValue.double(number).canonicalText
            // Integral values within ±(2^53 − 1) are integers in both; `-0` is `0` in both.
            if ours != expected { mismatches.append("\(number): ours \(ours), JavaScript \(expected)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    @Test func stringsAreEscapedAsJSONStringifyEscapesThem() async throws {
        var strings = (0..<0x80).map { String(Character(Unicode.Scalar(UInt8($0)))) }
        strings += ["/", "é", "e\u{301}", "\u{2028}", "\u{7f}", "😀", "a\"b\\c", "\u{fffd}", "\u{e000}"]
        let input = strings.map { JSONValue.string($0).canonicalText }.joined(separator: "\n")
        // Node parses each line and writes it again: the text must come back byte for byte.
        let script = """
            const lines = require('fs').readFileSync(process.argv[1], 'utf8').split('\\n');
            console.log(lines.map(l => JSON.stringify(JSON.parse(l))).join('\\n'));
            """
        let javascript = try await Self.node(script, input: input).split(
            separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in input.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            #expect(javascript[index] == line, "\(strings[index].unicodeScalars.map(\.value))")
        }
    }
}
