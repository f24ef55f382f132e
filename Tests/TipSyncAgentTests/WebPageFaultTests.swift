import Foundation
import Testing
import TipSyncTestSupport

extension WebBrowserTests {
    /// Waits (in the page) until `condition` holds, re-checked after each change of the sync status
    /// too (no polling).
    static func untilStatus(_ condition: String) -> String {
        """
        new Promise((resolve) => {
          const events = ['change', 'progress', 'leader', 'syncstatus'];
          const check = () => {
            if (!(\(condition))) return;
            for (const name of events) tipsync.removeEventListener(name, check);
            resolve(true);
          };
          for (const name of events) tipsync.addEventListener(name, check);
          check();
        })
        """
    }

    /// Issue 72's reproduction in a browser: the page's server is restarted on a new, empty
    /// database (every token refused), then on the right one. The page used to stop for good on the
    /// `401` while `isSyncing` stayed true and the demo said it synced; now it says `refused` with
    /// the code while it lasts, retries with backoff, and the dismissal made elsewhere meanwhile
    /// reaches it.
    @Test func aPageSyncsAgainAfterAServerOnTheWrongDatabase() async throws {
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pages, base, server) = try await Self.servePackageAndServer(in: directory)
        defer {
            pages.process.terminate()
            server.terminate()
        }
        let agent = try await TestAgent("cli", in: directory, server: server)
        let token = try await server.token(device: "browser-a")
        let browser = try await HeadlessChromium()
        try await browser.open("\(base)/Examples/web/?server=\(server.url)&device=browser-a&token=\(token)")
        #expect(try await browser.evaluate(Self.ready, awaitPromise: true) as? Bool == true)
        #expect(
            try await browser.evaluate(
                Self.untilStatus("tipsync.syncStatus.state === 'connected'"), awaitPromise: true) as? Bool == true)
        #expect(
            try await browser.evaluate(
                Self.untilStatus("tipsync.status('welcome') === 'available'"), awaitPromise: true)
                as? Bool == true)

        await server.stop()
        let wrong = try await TestServer(
            database: "sqlite:" + directory.appendingPathComponent("elsewhere/server.sqlite").path,
            createAccount: false, port: server.port)
        try await wrong.start(["--cors-origins", base])
        #expect(
            try await browser.evaluate(
                Self.untilStatus("tipsync.syncStatus.state === 'refused'"), awaitPromise: true) as? Bool == true)
        #expect(try await browser.evaluate("tipsync.syncStatus.code") as? String == "unauthorized")
        #expect(try await browser.evaluate("typeof tipsync.syncStatus.nextAttemptAt") as? String == "number")
        let said = try await browser.evaluate("document.querySelector('#sync-state').textContent") as? String
        #expect(said?.contains("the server refuses (unauthorized") == true, "\(said ?? "")")
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
        try await browser.screenshot(
            width: 1280, height: 800, to: Self.screenshots.appendingPathComponent("refused-1280.png").path)

        try await agent.check(["invalidate", "welcome"])
        await wrong.stop()
        try await server.start(["--cors-origins", base])
        try await agent.check(["sync"])
        #expect(
            try await browser.evaluate(
                Self.untilStatus("tipsync.status('welcome') === 'invalidated:tipClosed'"), awaitPromise: true)
                as? Bool == true)
        #expect(
            try await browser.evaluate(
                Self.untilStatus("tipsync.syncStatus.state === 'connected'"), awaitPromise: true) as? Bool == true)
        #expect(try await browser.evaluate("tipsync.isSyncing") as? Bool == true)
        await browser.quit()
    }
}
