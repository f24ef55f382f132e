import Foundation
import TipSyncServerBasics
import TipSyncStorage

/// One server setting as an operator meets it: a configuration key, the flag and the environment
/// variable that set it, its default and unit, and what it does.
///
/// Settings are described where they are read (``ServerConfiguration/init(reading:)``); the list of
/// them (``ServerConfiguration/settings``) is what `tipsync-server serve --help` prints and what a
/// test holds `deploy/README.md` and `deploy/tipsync-server.env` to.
package struct Setting: Sendable, Hashable {
    /// The configuration key, dot-separated (`tipsync.maxBatch`, `http.port`).
    package let key: String
    /// The default as an operator would write it (`1000`, `127.0.0.1`), or what happens when unset.
    package let defaultValue: String
    /// The unit of the value (`seconds`, `milliseconds`, `bytes`), if it has one.
    package let unit: String?
    /// What the setting does, one sentence.
    package let summary: String

    /// The command-line flag: the key's components after a leading `tipsync`, camelCase split into
    /// words, joined by `-` (`tipsync.maxClockSkew` → `--max-clock-skew`).
    package var flag: String {
        let components = key.split(separator: ".").map(String.init)
        let named = components.first == "tipsync" ? Array(components.dropFirst()) : components
        return "--" + named.map { Self.words($0).joined(separator: "-") }.joined(separator: "-")
    }

    /// The environment variable: every component, camelCase split into words, upper-cased and joined
    /// by `_` (`tipsync.maxClockSkew` → `TIPSYNC_MAX_CLOCK_SKEW`), as swift-configuration's
    /// `EnvironmentVariablesProvider` looks it up.
    package var environmentVariable: String {
        key.split(separator: ".").map { Self.words(String($0)).joined(separator: "_").uppercased() }.joined(
            separator: "_")
    }

    /// How a message names the setting: `--max-batch / TIPSYNC_MAX_BATCH`.
    package var names: String { "\(flag) / \(environmentVariable)" }

    /// `maxClockSkew` → `["max", "clock", "skew"]`: a word starts at each lower-to-upper case boundary.
    static func words(_ component: String) -> [String] {
        var words: [String] = []
        var current = ""
        var previousIsLower = false
        for character in component {
            if previousIsLower, character.isUppercase {
                words.append(current)
                current = ""
            }
            current.append(contentsOf: character.lowercased())
            previousIsLower = character.isLowercase
        }
        words.append(current)
        return words
    }
}

extension Setting {
    /// The setting's row in deploy/README.md's table (``ServerConfiguration/settingsTable``).
    var markdownRow: String {
        let value =
            defaultValue.first?.isNumber == true || defaultValue.contains(":") ? "`\(defaultValue)`" : defaultValue
        let cells = [
            "`\(flag)`", "`\(environmentVariable)`", value + (unit.map { " " + $0 } ?? ""),
            summary.replacingOccurrences(of: "|", with: "\\|"),
        ]
        return "| " + cells.joined(separator: " | ") + " |"
    }
}

extension ServerConfiguration {
    /// Every setting as a Markdown table: what deploy/README.md shows (a test keeps them equal) and
    /// `tipsync-server settings` prints.
    package static var settingsTable: String {
        (["| flag | environment | default | meaning |", "|---|---|---|---|"] + settings.map(\.markdownRow))
            .joined(separator: "\n")
    }
}
