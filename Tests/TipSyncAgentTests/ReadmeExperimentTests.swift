import Foundation
import Testing
import TipSyncCore

/// The README's experiment section as written: its catalog is one the server accepts, and its
/// commands run against a real database and print what it shows.
@Suite struct ReadmeExperimentTests {
    static func section() throws -> String {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        return try #require(readme.components(separatedBy: "### Experiments: does a tip work?").dropFirst().first)
    }

    @Test func theReadmesExperimentCatalogAndCommandsWorkAsShown() async throws {
        let section = try Self.section()
        let json = try #require(
            section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let catalog = try Catalog(validating: Array(json.utf8))
        #expect(catalog.tips.first?.experiment?.holdout == 10)
        let shell = try #require(
            section.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        let lines = shell.split(separator: "\n").map(String.init)
        let directory = scratchDirectory()
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        #expect(try await runTool("tipsync-server", ["migrate", "--database", database]).status == 0)
        let file = directory.appendingPathComponent("catalog.json")
        // The catalog without its experiment: the first command starts it.
        var plain = catalog
        plain.tips[0].experiment = nil
        try Data(try plain.canonicalText.utf8).write(to: file)
        #expect(try await runTool("tipsync-server", ["catalog", "put", file.path, "--database", database]).status == 0)
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.hasPrefix("tipsync-server ") else { continue }
            var words = line.components(separatedBy: "#")[0].components(separatedBy: ">")[0]
                .split(separator: " ").map(String.init)
            words.removeFirst()
            let needsDatabase = words[1] != "sample-size"
            let result = try await runTool("tipsync-server", words + (needsDatabase ? ["--database", database] : []))
            #expect(result.status == 0, "\(line): \(result.stderr)")
            // A line of output shown under a command is what it prints.
            if index < lines.count, lines[index].hasPrefix("# ") {
                #expect(result.stdout.trimmingCharacters(in: .newlines) == String(lines[index].dropFirst(2)), "\(line)")
            }
        }
        #expect(
            try await runTool("tipsync-server", ["experiment", "list", "--database", database]).stdout.contains(
                "search-2026-q4\ttip search\t10.0% held out\tstopped"))
    }
}
