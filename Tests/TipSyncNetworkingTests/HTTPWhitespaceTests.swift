import Testing
@testable import TipSyncNetworking

/// Header values are compared without HTTP's optional whitespace (spaces and tabs), and nothing else.
@Suite struct HTTPWhitespaceTests {
    @Test(arguments: [
        ("token", "token"), ("  token", "token"), ("token \t", "token"), ("\t to ken\t ", "to ken"),
        ("", ""), (" \t ", ""), ("é", "é"), (" \u{00A0}x\u{00A0} ", "\u{00A0}x\u{00A0}"), ("\n x", "\n x"),
    ])
    func optionalWhitespaceIsTrimmedAndNothingElse(_ value: String, _ trimmed: String) {
        #expect(String(value.trimmingHTTPWhitespace) == trimmed)
        #expect(String(("[" + value + "]").dropFirst().dropLast().trimmingHTTPWhitespace) == trimmed)
    }
}
