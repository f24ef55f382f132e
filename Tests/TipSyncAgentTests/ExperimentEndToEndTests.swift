import Foundation
import Testing
import TipSync
import TipSyncCore
import TipSyncTestSupport

/// A tip with a 10% holdout end to end (issue 57): one account with a Swift app, a browser (headless
/// Chromium, the web demo) and an agent, all following the server's catalog. The operator starts two
/// experiments from the CLI while the server runs; the account is held out of one (bucket 282 of
/// `experiment:search-7`) and treated in the other (8793 of `experiment:welcome-0`). No device shows
/// the held-out tip, each records reach, the browser's display records exposure, and the server's
/// results count the account once per experiment, in its arm.
@Suite(
    .serialized,
    .enabled(
        if: HeadlessChromium.executable != nil || ProcessInfo.processInfo.environment["TIPSYNC_REQUIRE_BROWSER"] != nil,
        "needs chromium and node"))
struct ExperimentEndToEndTests {
    @Test func aHeldOutAccountNeverSeesTheTipOnAnyDeviceAndEveryDeviceRecordsReach() async throws {
        #expect(RolloutBucket.bucket(account: "team", key: "experiment:search-7") == 282)
        #expect(RolloutBucket.bucket(account: "team", key: "experiment:welcome-0") == 8793)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pages, base, server) = try await WebBrowserTests.servePackageAndServer(in: directory)
        defer {
            pages.process.terminate()
            server.terminate()
        }
        let key = try await server.adminKey()
        let catalog = try String(
            contentsOf: packageRoot.appendingPathComponent("Examples/catalog.json"), encoding: .utf8)
        #expect(try await server.putCatalog(catalog, key: key) == 200)
        func cli(_ arguments: [String]) async throws -> CommandResult {
            try await runTool("tipsync-server", ["experiment"] + arguments + ["--database", server.database])
        }
        let started = try await cli([
            "start", "search", "--id", "search-7", "--holdout", "10", "--goal-event", "searched",
        ])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(
            try await cli(["start", "welcome", "--id", "welcome-0", "--holdout", "10", "--goal-action-performed"])
                .status == 0)

        // The browser: signed in (the search tip's rule), following the server's catalog.
        let token = try await server.token(device: "browser")
        let browser = try await HeadlessChromium()
        try await browser.open(
            "\(base)/Examples/web/?server=\(server.url)&device=browser&token=\(token)&followCatalog=1")
        #expect(try await browser.evaluate(WebBrowserTests.ready, awaitPromise: true) as? Bool == true)
        #expect(
            try await browser.evaluate(
                WebBrowserTests.until("tipsync.isSyncing && tipsync.replica.progress.pullCursor"), awaitPromise: true)
                as? Bool == true)
        let adopted = WebBrowserTests.until(
            "tipsync.replica.catalog.tips.some((tip) => tip.experiment?.id === 'search-7') && tipsync.replica.deviceContext?.account === 'team'"
        )
        #expect(try await browser.evaluate(adopted, awaitPromise: true) as? Bool == true)
        #expect(try await browser.evaluate("tipsync.status('search')") as? String == "pending")
        #expect(try await browser.evaluate("tipsync.explain('search').reason") as? String == "experiment")
        #expect(try await browser.evaluate("tipsync.explain('search').arm") as? String == "holdout")
        #expect(try await browser.evaluate(WebBrowserTests.shown("search")) as? Bool == false)
        // The treated tip shows once the first sync's hold is over: at once, or at its `tipsync-show`.
        let welcomeShown = """
            new Promise((resolve) => {
              if (\(WebBrowserTests.shown("welcome"))) return resolve(true);
              document.addEventListener('tipsync-show', (event) => { if (event.detail.tip === 'welcome') resolve(true); });
            })
            """
        #expect(try await browser.evaluate(welcomeShown, awaitPromise: true) as? Bool == true)
        // The hold is over and the held-out tip is still not shown.
        #expect(try await browser.evaluate(WebBrowserTests.shown("search")) as? Bool == false)
        // The element's display of the treated tip records exposure; the held-out one reach. Both are pushed.
        let recorded = WebBrowserTests.until(
            """
            ['tipsync.reach:search-7', 'tipsync.exposure:welcome-0'].every((event) =>
              tipsync.replica.state.donations(event).length > 0) && tipsync.replica.progress.pushedSeq >= tipsync.replica.lastLocalSeq
            """)
        #expect(try await browser.evaluate(recorded, awaitPromise: true) as? Bool == true)

        // The agent (the Swift library in a process).
        let agent = try await TestAgent("cli", in: directory, server: server, initOptions: ["--follow-catalog"])
        #expect(try await agent.run(["sync"]).status == 0)
        #expect(try await agent.status("search").status == "pending")
        let why = try await agent.run(["status", "search", "--why"])
        #expect(why.stdout.contains("search: pending — experiment 'search-7' holds this account out"), "\(why.stdout)")
        #expect(try await agent.status("welcome").status == "available")

        // A Swift app: the TipKit-shaped API over a replica that syncs with the server.
        let app = try TipsReplica(
            directory: directory.appendingPathComponent("app"), deviceID: "app", environment: [:])
        var configuration = SyncConfiguration(
            server: URL(string: server.url)!, token: try await server.token(device: "app"))
        configuration.followsServerCatalog = true
        let client = SyncClient(replica: app, configuration: configuration)
        try await client.syncOnce()
        #expect(app.deviceContext.account == "team")
        #expect(app.displayStatus(ofTip: "search") == .pending)
        #expect(app.explanation(ofTip: "search")?.reason == .experiment(id: "search-7", arm: .holdout))
        #expect(app.displayStatus(ofTip: "welcome") == .available)
        // The first reach came from the browser: the app, which merged it, writes none of its own.
        #expect(
            try app.localChanges().allSatisfy {
                if case .donation("tipsync.reach:search-7", _, _, _) = $0.operation { false } else { true }
            })

        // The server's results: the command first summarizes every account whose log grew.
        let results = try JSONParser.parse(Array(try await cli(["results", "search-7", "--json"]).stdout.utf8))
        func arm(_ json: JSONValue, _ index: Int) -> JSONValue? {
            if case .array(let arms)? = json["arms"], arms.indices.contains(index) { arms[index] } else { nil }
        }
        #expect(arm(results, 0)?["arm"] == .string("holdout"))
        #expect(arm(results, 0)?["reached"] == .int(1), "\(results.canonicalText)")
        #expect(arm(results, 1)?["reached"] == .int(0))
        let welcome = try JSONParser.parse(Array(try await cli(["results", "welcome-0", "--json"]).stdout.utf8))
        #expect(arm(welcome, 1)?["exposed"] == .int(1), "\(welcome.canonicalText)")
        let export = try await cli(["export", "search-7"])
        #expect(export.stdout.hasPrefix("account,arm,reachedAt,exposedAt,convertedAt\r\nteam,holdout,"))
        await browser.quit()
    }
}
