import Foundation
import Testing
import TipSyncTestSupport

/// `tipsync-agent init` checks the token when the server answers (issue 53, item 6): before, any
/// token was accepted, and the first sign of a wrong one was a failing `sync` later. A refused
/// token — or a URL that is not a sync server — writes nothing; a server that cannot be reached
/// does not stop a device being set up, and init says the token is not checked yet.
@Suite struct AgentInitTests {
    func initialize(_ store: URL, server: String, token: String) async throws -> CommandResult {
        try await runTool(
            "tipsync-agent",
            ["init", "--store", store.path, "--server", server, "--token", token, "--device", "laptop"])
    }

    @Test(.timeLimit(.minutes(2))) func aRefusedTokenWritesNothingAndAGoodOneSaysNothingMore() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let store = directory.appendingPathComponent("laptop")

        let refused = try await initialize(store, server: server.url, token: "ts_not-a-token")
        #expect(refused.status == 1)
        #expect(
            refused.stderr.hasPrefix(
                "tipsync-agent: the server at \(server.url) refused the token for device 'laptop' ("),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was written"))
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: store.path))

        let accepted = try await initialize(store, server: server.url, token: try await server.token(device: "laptop"))
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(accepted.stderr.isEmpty)
        #expect(FileManager.default.fileExists(atPath: store.appendingPathComponent("agent.json").path))
    }

    @Test func anUnreachableServerIsSaidAndTheStoreWritten() async throws {
        let store = scratchDirectory().appendingPathComponent("laptop")
        let port = FreePort.next()
        let offline = try await initialize(store, server: "http://127.0.0.1:\(port)", token: "ts_anything")
        #expect(offline.status == 0)
        #expect(
            offline.stderr
                == "tipsync-agent: the token is not checked yet (sync server unreachable: connection refused (http://127.0.0.1:\(port))); `tipsync-agent sync` will say\n"
        )
        #expect(FileManager.default.fileExists(atPath: store.appendingPathComponent("agent.json").path))
    }

    @Test func aURLThatIsNotASyncServerWritesNothing() async throws {
        let (pages, base) = try await WebBrowserTests.servePackage()
        defer { pages.process.terminate() }
        let store = scratchDirectory().appendingPathComponent("laptop")
        let wrong = try await initialize(store, server: base, token: "ts_anything")
        #expect(wrong.status == 1)
        #expect(wrong.stderr.hasPrefix("tipsync-agent: \(base) is not a TipSync server"), "\(wrong.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store.path))
    }
}
