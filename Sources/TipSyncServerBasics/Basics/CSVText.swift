import Foundation

/// The CSV every export of the server writes (RFC 4180, `\r\n` line ends), with each cell
/// neutralized against formula injection (OWASP, "CSV Injection"): a cell that begins with `=`, `+`,
/// `-`, `@`, a tab or a carriage return is read by spreadsheets as a formula — `=HYPERLINK(…)` in an
/// account name an identity provider chose ran when an operator opened the export (issue 74, item 1)
/// — so it is written with a leading `'`, which spreadsheets show as text. A cell holding a comma, a
/// quote or a line break is quoted, its quotes doubled.
package enum CSVText {
    /// The characters that make a spreadsheet read a cell as a formula.
    static let formulaStarts: Set<Character> = ["=", "+", "-", "@", "\t", "\r"]

    /// One cell, neutralized and quoted as needed.
    package static func cell(_ text: String) -> String {
        var text = text
        if let first = text.first, formulaStarts.contains(first) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// One line of cells, ended by `\r\n`.
    package static func line(_ cells: [String]) -> String {
        cells.map(cell).joined(separator: ",") + "\r\n"
    }
}
