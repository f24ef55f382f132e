import Foundation
import Testing
import TipSyncCore
import TipSyncTestSupport

/// A mistyped command does nothing but say so (issue 53, items 1 and 6): `tipsync-server acounts
/// create bob` started a server (`serve` is the default command), and the agent's refusal was four
/// lines of usage. Both now answer one line naming the closest command, exit status 64, and start
/// nothing.
@Suite(.timeLimit(.minutes(2))) struct MistypedCommandTests {
    @Test(
        arguments: [
            (["acounts", "create", "bob"], "unknown command 'acounts'; did you mean 'accounts'?"),
            (["admin-key", "create"], "unknown command 'admin-key'; did you mean 'admin-keys'?"),
            (["sreve"], "unknown command 'sreve'; did you mean 'serve'?"),
        ])
    func theServerRefusesAMistypedCommandInsteadOfServing(arguments: [String], expected: String) async throws {
        let directory = scratchDirectory()
        let result = try await runTool(
            "tipsync-server", arguments,
            environment: ["TIPSYNC_DATABASE": "sqlite:" + directory.appendingPathComponent("db.sqlite").path])
        #expect(result.status == 64)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("tipsync-server: \(expected) (commands: serve, migrate"))
        #expect(!result.stderr.contains("listening") && !result.stderr.contains("started"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("db.sqlite").path))
    }

    @Test func serveRefusesAStrayWordAfterIt() async throws {
        let directory = scratchDirectory()
        let result = try await runTool(
            "tipsync-server",
            ["serve", "acounts", "--database", "sqlite:" + directory.appendingPathComponent("x").path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("'acounts' is not one"))
        #expect(!result.stderr.contains("listening"))
    }

    @Test func theAgentRefusesAMistypedCommandInOneLine() async throws {
        let result = try await runTool("tipsync-agent", ["stauts"])
        #expect(result.status == 64)
        #expect(
            result.stderr
                == "tipsync-agent: unknown command 'stauts'; did you mean 'status'? (commands: init, catalog, donate, param, display, invalidate, reset-eligibility, status, sync, run, watch, export-history)\n"
        )
    }

    @Test func aNegativeClockOffsetIsAValue() async throws {
        let store = scratchDirectory().appendingPathComponent("store").path
        let result = try await runTool("tipsync-agent", ["status", "--clock-offset", "-86400", "--store", store])
        // Parsed: the command runs, and says there is no store (not "Missing value").
        #expect(!result.stderr.contains("Missing value"))
        #expect(result.stderr.contains("init"))
    }

    @Test func suggestionsAreTheClosestNameOrNone() {
        #expect(NameSuggestion.closest(to: "acounts", among: ["serve", "accounts", "tokens"]) == "accounts")
        #expect(NameSuggestion.closest(to: "tokns", among: ["serve", "accounts", "tokens"]) == "tokens")
        #expect(NameSuggestion.closest(to: "xyzzy", among: ["serve", "accounts", "tokens"]) == nil)
        #expect(NameSuggestion.unknownCommand("--help", commands: ["serve"]) == nil)
        #expect(NameSuggestion.unknownCommand("serve", commands: ["serve"]) == nil)
    }
}
