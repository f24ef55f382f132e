import Foundation
import Testing

/// The outputs the README documents, checked against what the commands print (issue 53, item 7).
///
/// In a README shell block, a command whose line ends with `# → TEXT` (or is followed by a line
/// `# → TEXT`) prints exactly TEXT: runs of
/// spaces in TEXT stand for any run of blanks (the agent separates columns with tabs) and `…` for
/// any text (a count that depends on timing). ``instrument(_:)`` brackets each such command with
/// marker lines; ``check(_:against:)`` compares what was printed between them.
enum ReadmeOutputs {
    struct Expectation {
        var command: String
        var output: String
    }

    static let arrow = "# → "

    /// `script` with a marker line echoed before and after each documented command, and what each
    /// should print.
    static func instrument(_ script: String) -> (script: String, expectations: [Expectation]) {
        var lines: [String] = []
        var expectations: [Expectation] = []
        for line in script.components(separatedBy: "\n") {
            guard let arrow = line.range(of: Self.arrow) else {
                lines.append(line)
                continue
            }
            // `# → TEXT` on a line of its own documents the command on the line before.
            var command = String(line[..<arrow.lowerBound])
            if command.trimmingCharacters(in: .whitespaces).isEmpty, let previous = lines.popLast() {
                command = previous
            }
            let index = expectations.count
            expectations.append(
                Expectation(
                    command: command.trimmingCharacters(in: .whitespaces),
                    output: String(line[arrow.upperBound...]).trimmingCharacters(in: .whitespaces)))
            lines += ["echo '@@readme-output \(index)'", command, "echo '@@readme-output-end \(index)'"]
        }
        return (lines.joined(separator: "\n"), expectations)
    }

    /// Records an issue for each documented output the script's `stdout` does not show.
    static func check(_ stdout: String, against expectations: [Expectation]) {
        for (index, expectation) in expectations.enumerated() {
            guard let start = stdout.range(of: "@@readme-output \(index)\n"),
                let end = stdout.range(of: "@@readme-output-end \(index)\n", range: start.upperBound..<stdout.endIndex)
            else {
                Issue.record("`\(expectation.command)` did not run")
                continue
            }
            let printed = stdout[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(
                matches(printed, expectation.output),
                "README: `\(expectation.command)` prints \"\(expectation.output)\"; it printed \"\(printed)\"")
        }
    }

    /// Whether `printed` is `documented`, blanks and `…` read as above.
    static func matches(_ printed: String, _ documented: String) -> Bool {
        var pattern = "^"
        for word in documented.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
            if pattern != "^" { pattern += "\\s+" }
            pattern += word.components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:))
                .joined(separator: ".*")
        }
        pattern += "$"
        return printed.range(of: pattern, options: .regularExpression) != nil
    }
}
