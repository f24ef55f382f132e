/// "Did you mean …?": the known name closest to one that was mistyped, for errors that name what
/// exists (a misspelled command, tip or setting).
public enum NameSuggestion {
    /// The name among `known` with the fewest single-character edits from `typed` (at most a third of
    /// its length, and at least 2), or one `typed` is a prefix of; `nil` when none is that close.
    public static func closest(to typed: String, among known: [String]) -> String? {
        let limit = max(2, typed.count / 3)
        let scored = known.map { ($0, distance(Array(typed.lowercased()), Array($0.lowercased()))) }
        if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= limit { return best.0 }
        return known.first { $0.hasPrefix(typed) || typed.hasPrefix($0) }
    }

    /// Levenshtein distance, with a swap of two neighbours counted as one edit.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
                }
            }
        }
        return rows[a.count][b.count]
    }

    /// The one-line error for a word given where a command was expected, or `nil` when `word` is a
    /// command (or an option, which the parser judges): `unknown command 'sreve'; did you mean
    /// 'serve'? (commands: serve, migrate, …)`.
    public static func unknownCommand(_ word: String, commands: [String]) -> String? {
        guard !word.hasPrefix("-"), !commands.contains(word), word != "help" else { return nil }
        let suggestion = closest(to: word, among: commands).map { "; did you mean '\($0)'?" } ?? ""
        return "unknown command '\(word)'\(suggestion) (commands: \(commands.joined(separator: ", ")))"
    }
}
