import Foundation
import NIOCore
import Synchronization
import Testing
import TipSync
import TipSyncCore
import TipSyncTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A device that joins an account after its tips were dismissed elsewhere, 400 ms (round trip)
/// from the server, as a new phone on a mobile network is (issue 52: before the first-sync hold a
/// new agent said `available` for ~1 s, a page showed both tips for ~2 s and stored 2 displays, a
/// Swift program showed its tip for ~0.9 s). Three new devices of one account join through a
/// ``SlowLink`` at once — an agent, the web demo in Chromium, and a Swift program's loop — and none
/// of them ever reports, shows or counts a dismissed tip.
@Suite(
    .serialized,
    .enabled(
        if: HeadlessChromium.executable != nil || ProcessInfo.processInfo.environment["TIPSYNC_REQUIRE_BROWSER"] != nil,
        "needs chromium and node"))
struct SlowLinkFirstSyncTests {
    /// `welcome` as a Swift app declares it (the shared example catalog's tip).
    struct Welcome: Tip {
        var id: String { "welcome" }
        var title: String { "Welcome to Yards" }
    }

    @Test(.timeLimit(.minutes(5))) func newDevicesOnASlowLinkNeverShowNorCountTipsDismissedElsewhere() async throws {
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pages, base, server) = try await WebBrowserTests.servePackageAndServer(in: directory)
        defer {
            pages.process.terminate()
            server.terminate()
        }
        // The old device: shows `welcome` twice and `search` once, then closes both.
        let phone = try await TestAgent("phone", in: directory, server: server)
        try await phone.check(["param", "set", "isLoggedIn", "true"])
        try await phone.check(["display", "welcome"])
        try await phone.check(["display", "welcome"])
        try await phone.check(["display", "search"])
        try await phone.check(["invalidate", "welcome"])
        try await phone.check(["invalidate", "search"])
        try await phone.check(["sync"])

        let link = try await SlowLink(to: server.port, oneWay: .milliseconds(200))
        let slowURL = "http://127.0.0.1:\(link.port)"
        // The link is as slow as it says: a request's answer cannot come back sooner than one round
        // trip (a lower bound, which no load can break).
        let clock = ContinuousClock()
        let started = clock.now
        let (_, health) = try await URLSession.shared.data(from: URL(string: slowURL + "/health")!)
        #expect((health as? HTTPURLResponse)?.statusCode == 200)
        #expect(clock.now - started >= .milliseconds(400))

        // The new agent: from `init` on, its tips are held until the first pull has been merged.
        // Each device waits for its first sync as long as it takes (here: however loaded the machine
        // running the suite is); that the wait is bounded is tested on its own in each client.
        let laptop = try await TestAgent(
            "laptop", in: directory, server: server, serverURL: slowURL, initOptions: ["--first-sync-timeout", "600"])
        #expect(try await laptop.status("welcome").status == "pending")
        let daemon = try await laptop.startDaemon()
        async let watchedWelcome = laptop.run(["watch", "welcome", "--until", "invalidated", "--timeout", "60"])
        async let watchedSearch = laptop.run(["watch", "search", "--until", "invalidated", "--timeout", "60"])

        // The new page: every `tipsync-show` from its first moment is recorded.
        let browser = try await HeadlessChromium()
        try await browser.runBeforeEachPage(
            """
            globalThis.shown = [];
            document.addEventListener('tipsync-show', (event) => shown.push(event.detail.tip));
            """)
        let token = try await server.token(device: "browser")
        try await browser.open(
            "\(base)/Examples/web/?server=\(slowURL)&device=browser&token=\(token)&firstSyncTimeout=600")
        #expect(try await browser.evaluate(WebBrowserTests.ready, awaitPromise: true) as? Bool == true)

        // The new Swift device, as `Tips.configure([.sync(…)])` starts one, then running the loop an
        // app runs: show (and count) whatever is available.
        let tablet = try TipsReplica(
            directory: directory.appendingPathComponent("tablet"), deviceID: "tablet", environment: [:])
        try tablet.load(
            catalog: try Catalog(
                validating: try Data(contentsOf: packageRoot.appendingPathComponent("Examples/catalog.json"))))
        var tabletSync = SyncConfiguration(
            server: URL(string: slowURL)!, token: try await server.token(device: "tablet"))
        tabletSync.firstSyncTimeout = 600
        let client = SyncClient(replica: tablet, configuration: tabletSync)
        let seen = Mutex<[Tips.Status]>([])
        let appLoop = Task {
            for await status in Welcome().statusUpdates(in: tablet) {
                seen.withLock { $0.append(status) }
                if status == .available { try? Welcome().recordDisplay(in: tablet) }
                if case .invalidated = status { return }
            }
        }
        let syncing = Task { try await client.run() }
        defer { syncing.cancel() }

        // Every new device learns both dismissals…
        let welcomeReports = try await watchedWelcome
        let searchReports = try await watchedSearch
        #expect(welcomeReports.status == 0, "\(welcomeReports.stderr)")
        #expect(searchReports.status == 0, "\(searchReports.stderr)")
        #expect(
            try await browser.evaluate(
                WebBrowserTests.until(
                    "tipsync.status('welcome') === 'invalidated:tipClosed' && tipsync.status('search') === 'invalidated:tipClosed'"
                ), awaitPromise: true) as? Bool == true)
        await appLoop.value
        #expect(await client.waitForFirstSync(timeout: .seconds(30)))

        // …and none of them ever reported, showed or counted one of them.
        for line in (welcomeReports.stdout + searchReports.stdout).split(separator: "\n") {
            #expect(!line.contains(#""status":"available""#), "the agent said: \(line)")
        }
        #expect(try await browser.evaluate("shown.length") as? Int == 0)
        #expect(
            try await browser.evaluate(
                "tipsync.replica.state.displayTotals('welcome').count + tipsync.replica.state.displayTotals('search').count"
            ) as? Int == 2 + 1)
        #expect(!seen.withLock { $0 }.contains(.available))
        #expect(seen.withLock { $0 }.first == .pending)
        #expect(tablet.displayTotals(ofTip: "welcome").count == 2)
        #expect(try await laptop.status("welcome").displayCount == 2)
        #expect(try await laptop.status("search").displayCount == 1)

        await daemon.stop()
        await browser.quit()
        await link.close()
    }
}
