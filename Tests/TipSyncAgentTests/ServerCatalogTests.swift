import Foundation
import Testing
import TipSyncAgent

/// Changing a tip without an app update (issue 33): a rule change uploaded through the admin API
/// reaches a running `tipsync-agent` that follows the server's catalog and flips its tip's status,
/// without a restart; the catalog it applied is kept for the next (offline) start.
@Suite struct ServerCatalogTests {
    static func catalog(rules: String) -> String {
        #"{"parameters": [{"id": "ready", "default": false}], "tips": [{"id": "welcome", "title": "Welcome", "rules": \#(rules)}, {"id": "extra", "title": "Added by the server"}]}"#
    }

    @Test func anUploadedRuleChangeFlipsARunningAgentsTip() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let key = try await server.adminKey()
        let phone = try await TestAgent("phone", in: directory, server: server, initOptions: ["--follow-catalog"])
        let laptop = try await TestAgent("laptop", in: directory, server: server)  // does not follow
        #expect(try await server.putCatalog(Self.catalog(rules: #"[{"param": "ready"}]"#), key: key) == 200)
        let daemon = try await phone.startDaemon()
        #expect(await daemon.waitForLog("applied the server's catalog"))
        let watcher = try LocalAPIClient(path: phone.socketPath)
        try watcher.send(#"{"op":"watch","tip":"welcome"}"#)
        #expect(try await watcher.nextLine()?.contains(#""status":"pending""#) == true)

        // The rule changes on the server: the running agent's tip flips, no restart, no sync call.
        let started = ContinuousClock.now
        #expect(try await server.putCatalog(Self.catalog(rules: "[]"), key: key) == 200)
        #expect(try await watcher.nextLine()?.contains(#""status":"available""#) == true)
        print("catalog upload → running agent's status flip: \(ContinuousClock.now - started)")
        // Rolled back on the server: it flips back.
        #expect(try await server.restoreCatalog(1, key: key) == 200)
        #expect(try await watcher.nextLine()?.contains(#""status":"pending""#) == true)
        #expect(try await server.putCatalog(Self.catalog(rules: "[]"), key: key) == 200)
        #expect(try await watcher.nextLine()?.contains(#""status":"available""#) == true)
        // Catalog-only tips come with it; the bundled catalog's tips are gone (it replaces the catalog).
        #expect(try await phone.status("extra").status == "available")
        #expect(try await phone.run(["status", "upgrade"]).stderr.contains("unknown tip 'upgrade'"))
        // A device that does not follow keeps its own catalog.
        #expect(try await laptop.run(["status", "upgrade"]).status == 0)
        #expect(try await laptop.run(["status", "extra"]).stderr.contains("unknown tip 'extra'"))

        // Stopped and started without a server: the catalog it applied is the one it uses.
        #expect(await daemon.stop() == 0)
        server.terminate()
        #expect(try await phone.status("welcome").status == "available")
        #expect(try await phone.status("extra").status == "available")
    }
}
