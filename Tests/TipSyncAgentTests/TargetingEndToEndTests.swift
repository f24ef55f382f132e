import Foundation
import Testing
import TipSyncAgent
import TipSyncCore

/// Targeting, rollout, the off switch and "why" (issue 56, protocol.md §13.8–13.9) through real
/// processes: a server whose catalog targets platforms, app versions, languages and 10% of accounts,
/// and an agent that follows it, says why each tip has its status, and stops showing every tip when
/// the catalog is turned off — while it runs, without a restart.
@Suite struct TargetingEndToEndTests {
    static let catalog = #"""
        {"tips": [
          {"id": "ios-from-2.10", "title": "New on iOS",
           "targeting": [{"==": [{"context": "platform"}, "ios"]},
                         {">=": [{"compareVersions": [{"context": "appVersion"}, "2.10"]}, 0]}]},
          {"id": "web-only", "title": "Web", "targeting": [{"==": [{"context": "platform"}, "web"]}]},
          {"id": "french", "title": "Bonjour", "targeting": [{"==": [{"context": "language"}, "fr"]}]},
          {"id": "ten-percent", "title": "Rolled out", "targeting": [{"<": [{"bucket": "rollout-10"}, 1000]}]},
          {"id": "seventy-percent", "title": "Rolled out", "targeting": [{"<": [{"bucket": "rollout-10"}, 7000]}]},
          {"id": "everywhere", "title": "Everyone"}
        ]}
        """#

    @Test func anAgentTargetedByPlatformVersionLocaleAndBucketExplainsItselfAndObeysTheOffSwitch() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let key = try await server.adminKey()
        #expect(try await server.putCatalog(Self.catalog, key: key) == 200)
        let phone = try await TestAgent(
            "phone", in: directory, server: server,
            initOptions: ["--follow-catalog", "--platform", "ios", "--app-version", "2.10.1", "--locale", "fr_CA"])
        #expect(try await phone.run(["sync"]).status == 0)

        // The account `team` is in bucket 6615 of rollout-10: outside 10%, inside 70% — the same
        // bucket the conformance corpus and every client compute.
        #expect(RolloutBucket.bucket(account: "team", key: "rollout-10") == 6615)
        let expected = [
            "ios-from-2.10": "available", "web-only": "pending", "french": "available", "ten-percent": "pending",
            "seventy-percent": "available", "everywhere": "available",
        ]
        for (tip, status) in expected { #expect(try await phone.status(tip).status == status, "\(tip)") }

        let why = try await phone.run(["status", "--why"])
        #expect(why.status == 0)
        #expect(
            why.stdout.contains(
                "web-only: pending — targeting[0] {\"==\":[{\"context\":\"platform\"},\"web\"]} does not hold (context:platform = \"ios\")"
            ), "\(why.stdout)")
        #expect(why.stdout.contains("ten-percent: pending — targeting[0]"), "\(why.stdout)")
        #expect(why.stdout.contains("bucket:rollout-10 = 6615"), "\(why.stdout)")
        #expect(why.stdout.contains("everywhere: available — nothing holds it back"), "\(why.stdout)")
        let json = try await phone.run(["status", "ten-percent", "--why", "--json"])
        let parsed = try JSONParser.parse(Array(json.stdout.utf8))
        guard case .array(let tips)? = parsed["tips"], let first = tips.first else {
            Issue.record("status --why --json: \(json.stdout)")
            return
        }
        #expect(first["reason"] == .string("targeting"))
        #expect(first["values"]?["bucket:rollout-10"] == .int(6615))

        // The off switch, while the agent runs: every tip it shows stops, without a restart.
        let daemon = try await phone.startDaemon()
        let watcher = try LocalAPIClient(path: phone.socketPath)
        try watcher.send(#"{"op":"watch","tip":"everywhere"}"#)
        #expect(try await watcher.nextLine()?.contains(#""status":"available""#) == true)
        let off = Self.catalog.replacingOccurrences(of: #"{"tips": ["#, with: #"{"enabled": false, "tips": ["#)
        let started = ContinuousClock.now
        #expect(try await server.putCatalog(off, key: key) == 200)
        #expect(try await watcher.nextLine()?.contains(#""status":"pending""#) == true)
        print("kill switch upload → running agent's tip pending: \(ContinuousClock.now - started)")
        let turnedOff = try await phone.run(["status", "everywhere", "--why"])
        #expect(
            turnedOff.stdout.contains("everywhere: pending — the catalog turns every tip off"), "\(turnedOff.stdout)")
        // Turned on again: everything is as it was (nothing was written to the log).
        #expect(try await server.putCatalog(Self.catalog, key: key) == 200)
        #expect(try await watcher.nextLine()?.contains(#""status":"available""#) == true)
        #expect(await daemon.stop() == 0)
    }

    /// The README's targeting example: its catalog, uploaded, gives exactly the `status --why` lines
    /// the README shows, for the account `team` on an iOS device at 2.10.1 in French.
    @Test func theReadmesTargetingExampleSaysWhatTheReadmeShows() async throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "### Targeting, rollout").dropFirst().first)
        let json = try #require(
            section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let shell = try #require(
            section.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        let shown = shell.split(separator: "\n").filter { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) }
        #expect(shown.count == 3)

        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        #expect(try await server.putCatalog(json, key: try await server.adminKey()) == 200)
        let phone = try await TestAgent(
            "phone", in: directory, server: server,
            initOptions: ["--follow-catalog", "--platform", "ios", "--app-version", "2.10.1", "--locale", "fr-CA"])
        #expect(try await phone.run(["sync"]).status == 0)
        let why = try await phone.run(["status", "--why"])
        #expect(why.stdout.split(separator: "\n").map(String.init) == shown, "\(why.stdout)")
    }

    /// One catalog for an iOS app and a web app (issue 56, item 1): the web team's catalog is stored,
    /// then the Swift export is merged as the `ios` part from the CLI — the web tips stay, the export's
    /// `daily` display frequency applies to iOS devices only — and each platform's agent sees its tips.
    /// Removing the part leaves the web catalog as it was.
    @Test func theSwiftExportMergedAsTheIOSPartKeepsTheWebTips() async throws {
        let directory = scratchDirectory()
        let web = directory.appendingPathComponent("web.json")
        let export = directory.appendingPathComponent("ios.json")
        try
            #"{"tips": [{"id": "welcome", "title": "Welcome"}, {"id": "search", "title": "Search", "platforms": ["web"]}]}"#
            .write(to: web, atomically: true, encoding: .utf8)
        try #"{"displayFrequency": "daily", "tips": [{"id": "onboarding", "title": "Swipe to archive"}]}"#
            .write(to: export, atomically: true, encoding: .utf8)
        let server = try await TestServer(directory: directory)
        func cli(_ arguments: [String]) async throws -> CommandResult {
            try await runTool("tipsync-server", arguments + ["--database", server.database])
        }
        #expect(try await cli(["catalog", "put", web.path]).status == 0)
        let merged = try await cli(["catalog", "put", export.path, "--platform", "ios"])
        #expect(merged.stdout.contains("merged 1 tips as the 'ios' part: a catalog of 3 tips"), "\(merged.stderr)")
        try await server.start()
        defer { server.terminate() }
        let phone = try await TestAgent(
            "phone", in: directory, server: server, initOptions: ["--follow-catalog", "--platform", "ios"])
        let browser = try await TestAgent(
            "browser", in: directory, server: server, initOptions: ["--follow-catalog", "--platform", "web"])
        for agent in [phone, browser] { #expect(try await agent.run(["sync"]).status == 0) }
        #expect(
            try await phone.run(["status"]).stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] } == [
                "welcome", "onboarding",
            ])
        #expect(
            try await browser.run(["status"]).stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] } == [
                "welcome", "search",
            ])
        let shown = try await cli(["catalog", "show"])
        #expect(shown.stdout.contains(#""platformSettings":{"ios":{"displayFrequency":"daily"}}"#), "\(shown.stdout)")
        #expect(
            !shown.stdout.contains(#""displayFrequency":"daily","groups""#),
            "the export's frequency is not the app-wide one")

        let removed = try await cli(["catalog", "remove-platform", "ios"])
        #expect(removed.stdout.contains("removed the 'ios' part: a catalog of 2 tips"), "\(removed.stderr)")
        #expect(
            try await cli(["catalog", "put", export.path, "--platform", "iOS"]).stderr.contains(
                "--platform: a platform is"))
    }
}
