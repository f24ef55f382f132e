import Foundation
import Synchronization
import Testing
import TipSync
import TipSyncServerTestSupport
import TipSyncTestSupport

/// A catalog stored with `tipsync-server catalog put|restore` beside a running server reaches the
/// devices it serves — as the admin API's and the console's do (protocol.md §16). Before, a running
/// device kept the old catalog until it happened to pull.
@Suite struct CatalogFromTheCommandLineTests {
    /// Five command-line runs, a server process and a sync client: a minute was not always enough
    /// beside the whole suite on two cores. The limit is a guard against hanging, not a timing claim.
    @Test(.timeLimit(.minutes(5))) func aCatalogPutOrRestoredWithTheCLIReachesARunningDevice() async throws {
        let directory = Scratch.path("tipsync-cli-catalog")
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        #expect(try await ServerProcess.run(["accounts", "create", "alice", "--database", database]).status == 0)
        let token = try await ServerProcess.run([
            "tokens", "create", "--account", "alice", "--device", "phone", "--database", database,
        ])
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        func catalog(_ title: String) throws -> String {
            let file = directory.appendingPathComponent("\(title).json")
            try Data(#"{"tips":[{"id":"welcome","title":"\#(title)"}]}"#.utf8).write(to: file)
            return file.path
        }
        #expect(
            try await ServerProcess.run(["catalog", "put", try catalog("First"), "--database", database]).status
                == 0)

        let port = FreePort.next()
        let server = try ChildProcess(
            ServerProcess.productsDirectory.appendingPathComponent("tipsync-server").path, ["serve"],
            environment: ["HTTP_PORT": String(port), "TIPSYNC_DATABASE": database])
        defer { server.terminate() }
        #expect(await server.stderr.waitFor("listening"))

        let applied = AsyncStream<String>.makeStream()
        var configuration = SyncConfiguration(server: URL(string: "http://127.0.0.1:\(port)")!, token: token)
        configuration.followsServerCatalog = true
        configuration.onServerCatalog = { event in
            if case .applied(_, let catalog, _) = event { applied.continuation.yield(catalog.tips[0].title) }
        }
        let phone = try makeDevice("phone")
        let client = SyncClient(replica: phone, configuration: configuration)
        let running = Task { try await client.run() }
        defer { running.cancel() }
        var titles = applied.stream.makeAsyncIterator()
        #expect(await titles.next() == "First")
        // Live, on its stream: no pull happens unless the server tells the device.
        #expect(await client.waitForFirstSync(timeout: .seconds(60)))

        let put = try await ServerProcess.run(["catalog", "put", try catalog("Second"), "--database", database])
        #expect(put.status == 0, "\(put)")
        #expect(await titles.next() == "Second")
        let restored = try await ServerProcess.run(["catalog", "restore", "1", "--database", database])
        #expect(restored.status == 0, "\(restored)")
        #expect(await titles.next() == "First")
        #expect(phone.catalogTip("welcome")?.title == "First")
    }
}
