import Foundation
import Testing
import TipSyncTestSupport

/// The README's Swift is code the suite builds and runs: every Swift block names the compiled file
/// that holds it (or says why it is not compiled), and the walkthrough program, built from
/// `Examples/Walkthrough`, runs against a real server with a real `tipsync-agent` on the account.
@Suite struct ReadmeExampleTests {
    struct Block {
        var marker: String
        var code: String
        var line: Int
    }

    static func swiftBlocks() throws -> [Block] {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.components(separatedBy: "\n")
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            if lines[index] == "```swift" {
                let marker = index > 0 ? lines[index - 1] : ""
                var end = index + 1
                while end < lines.count, lines[end] != "```" { end += 1 }
                blocks.append(
                    Block(marker: marker, code: lines[(index + 1)..<end].joined(separator: "\n"), line: index + 1))
                index = end
            }
            index += 1
        }
        return blocks
    }

    /// Lines without their indentation and trailing spaces, blank lines dropped.
    static func normalized(_ text: String) -> [String] {
        text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test func everySwiftBlockIsInACompiledFileVerbatim() throws {
        let blocks = try Self.swiftBlocks()
        #expect(blocks.count >= 5)
        for block in blocks {
            if block.marker.hasPrefix("<!-- not compiled: ") { continue }
            let prefix = "<!-- compiled: "
            guard block.marker.hasPrefix(prefix), block.marker.hasSuffix(" -->") else {
                Issue.record("README line \(block.line): a Swift block without a <!-- compiled: FILE --> marker")
                continue
            }
            let path = String(block.marker.dropFirst(prefix.count).dropLast(" -->".count))
            // Only files of the example targets this test target depends on (so built).
            #expect(
                path.hasPrefix("Examples/Walkthrough/") || path.hasPrefix("Examples/ExportCatalog/"),
                "README line \(block.line): \(path) is not compiled")
            let file = try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
            let code = Self.normalized(block.code)
            let lines = Self.normalized(file)
            var found = false
            for start in lines.indices where start + code.count <= lines.count {
                let window: [String] = Array(lines[start..<(start + code.count)])
                if window == code { found = true }
            }
            #expect(found, "README line \(block.line): the block is not in \(path) as written")
        }
    }

    /// The block after `<!-- output: PROGRAM -->` in the README: what the program prints.
    static func documentedOutput(_ program: String) throws -> String {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- output: \(program) -->\n```\n"))
        let end = try #require(readme.range(of: "```\n", range: start.upperBound..<readme.endIndex))
        return String(readme[start.upperBound..<end.lowerBound])
    }

    /// The walkthrough without a server prints what the README says, and exits.
    @Test(.timeLimit(.minutes(2))) func theWalkthroughPrintsWhatTheReadmeSaysAndExits() async throws {
        let directory = scratchDirectory()
        let program = try ChildProcess(
            productsDirectory.appendingPathComponent("tipsync-walkthrough").path, [],
            environment: ["XDG_DATA_HOME": directory.path])
        #expect(await program.exitStatus() == 0)
        #expect(program.stdout.text == (try Self.documentedOutput("tipsync-walkthrough")))
    }

    /// `tipsync-walkthrough` (Examples/Walkthrough/App.swift) as device `phone`, its data in `dataHome`.
    static func runWalkthrough(dataHome: URL, server: String, token: String) throws -> ChildProcess {
        // Line-buffered stdout, so the test reads what the program printed as it prints it.
        try ChildProcess(
            "/usr/bin/stdbuf", ["-oL", productsDirectory.appendingPathComponent("tipsync-walkthrough").path],
            environment: [
                "XDG_DATA_HOME": dataHome.path, "TIPSYNC_SERVER": server, "TIPSYNC_TOKEN": token,
                "TIPSYNC_DEVICE": "phone",
            ])
    }

    /// The walkthrough as a person runs it: configure with sync, then change things at once. Its
    /// dismissal reaches an agent device of the same account while the program runs (before the
    /// fix it stayed on the phone: the changes landed during the first round's pull).
    @Test(.timeLimit(.minutes(5))) func theWalkthroughsDismissalReachesAnAgentWhileItRuns() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let laptop = try await TestAgent("laptop", in: directory, server: server)
        let daemon = try await laptop.startDaemon()
        let program = try Self.runWalkthrough(
            dataHome: directory.appendingPathComponent("phone-data"), server: server.url,
            token: try await server.token(device: "phone"))
        defer { program.terminate() }
        let watched = try await laptop.run(["watch", "favorite", "--until", "invalidated", "--timeout", "60"])
        #expect(watched.status == 0, "\(watched.stderr)")
        #expect(watched.stdout.contains(#""reason":"tipClosed""#))
        // It prints what the README says it prints, and exits (it used to run until killed).
        #expect(await program.exitStatus() == 0)
        #expect(program.stdout.text == (try Self.documentedOutput("tipsync-walkthrough")))
        await daemon.stop()
    }

    /// A program killed before it could reach the server (the server was down) pushes what it left
    /// at its next launch: the agent sees both launches' donations.
    @Test(.timeLimit(.minutes(5))) func aQuitProgramsChangesArePushedAtItsNextLaunch() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        let token = try await server.token(device: "phone")
        let laptop = try await TestAgent("laptop", in: directory, server: server)
        // A catalog whose tip appears once "opened-detail" has two donations: one per launch.
        let catalog = directory.appendingPathComponent("two-launches.json")
        try Data(
            #"""
            {"events": [{"id": "opened-detail"}, {"id": "viewed-yard"}],
             "tips": [{"id": "favorite", "title": "Save as a Favorite"},
                      {"id": "two-launches", "title": "Seen twice",
                       "rules": [{">=": [{"count": {"donations": "opened-detail"}}, 2]}]}]}
            """#.utf8
        ).write(to: catalog)
        try await laptop.check(["catalog", "load", catalog.path])
        let dataHome = directory.appendingPathComponent("phone-data")

        // First launch: nothing listens at the server's address yet. The program makes its changes
        // (it prints the tip's status after them) and is killed.
        let first = try Self.runWalkthrough(dataHome: dataHome, server: server.url, token: token)
        #expect(await first.stdout.waitFor("invalidated"))
        first.signal(SIGKILL)
        _ = await first.exitStatus()

        try await server.start()
        defer { server.terminate() }
        let daemon = try await laptop.startDaemon()
        #expect(try await laptop.status("two-launches").status == "pending")
        let second = try Self.runWalkthrough(dataHome: dataHome, server: server.url, token: token)
        defer { second.terminate() }
        let watched = try await laptop.run(["watch", "two-launches", "--until", "available", "--timeout", "60"])
        #expect(watched.status == 0, "the first launch's donation never arrived: \(watched.stderr)")
        await daemon.stop()
    }
}
