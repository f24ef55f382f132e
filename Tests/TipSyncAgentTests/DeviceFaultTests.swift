import Foundation
import Synchronization
import Testing
import TipSyncAgent
import TipSyncTestSupport

/// Faults made by others, from the device's side (issue 72): real `tipsync-server` processes and a
/// real `tipsync-agent run` daemon — a Swift program syncing with ``SyncClient`` — on one store.
/// After each fault the dismissal made elsewhere reaches the daemon, and its status said what
/// happened while it happened.
@Suite struct DeviceFaultTests {
    /// A server, the agent `phone` (CLI) and the agent `laptop` whose daemon has completed its first sync.
    static func synced() async throws -> (URL, TestServer, TestAgent, TestAgent, Background) {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        let phone = try await TestAgent("phone", in: directory, server: server)
        let laptop = try await TestAgent("laptop", in: directory, server: server)
        let daemon = try await laptop.startDaemon()
        #expect(await within(60) { await daemon.waitForLog("first sync complete") }, "\(daemon.log)")
        return (directory, server, phone, laptop, daemon)
    }

    /// The reproduction: the operator restarts the server from another folder, so it runs on a new,
    /// empty database and refuses every token; then on the right one again. The daemon used to log
    /// `sync stopped` and never sync again while it kept answering `available`.
    @Test func aDaemonSyncsAgainAfterAServerOnTheWrongDatabase() async throws {
        let (directory, server, phone, laptop, daemon) = try await Self.synced()
        defer {
            server.terminate()
            daemon.process.terminate()
        }
        #expect(try await laptop.syncState()["state"] as? String == "connected")

        // The wrong database: empty, at the same address. The server says so when it creates it.
        await server.stop()
        let wrong = try await TestServer(
            database: "sqlite:" + directory.appendingPathComponent("elsewhere/server.sqlite").path,
            createAccount: false, port: server.port)
        try await wrong.start()
        #expect(wrong.process.withLock { $0 }?.log.contains("created a new, empty database at") == true)
        #expect(await within(60) { await daemon.waitForLog("the server refuses to sync") })
        let refused = try await laptop.syncState()
        #expect(refused["state"] as? String == "refused")
        #expect(refused["code"] as? String == "unauthorized")
        #expect(refused["nextAttemptAt"] is Double)
        #expect(
            await within(60) {
                await wrong.process.withLock { $0 }!.waitForLog("is this server on the right database?")
            })

        // Meanwhile the phone dismisses the tip; then the right server is back.
        try await phone.check(["invalidate", "welcome"])
        await wrong.stop()
        try await server.start()
        try await phone.check(["sync"])
        let watched = try await laptop.run(["watch", "welcome", "--until", "invalidated", "--timeout", "90"])
        #expect(watched.status == 0, "\(watched.stderr)\n\(daemon.log)")
        #expect(daemon.log.contains("syncing again"))
        #expect(!daemon.log.contains("sync stopped"))
        #expect(try await laptop.syncState()["state"] as? String == "connected")
    }

    /// A revoked token, then a new one written with `init` while the daemon runs: the daemon reads
    /// its credential again after the refusal and syncs on, without a restart.
    @Test func aDaemonSyncsAgainWithATokenReissuedWhileItRuns() async throws {
        let (_, server, phone, laptop, daemon) = try await Self.synced()
        defer {
            server.terminate()
            daemon.process.terminate()
        }

        // Revoked while the server restarts (a revocation through the CLI takes effect at the
        // device's next request; the restart makes one).
        await server.stop()
        let revoked = try await runTool(
            "tipsync-server",
            ["tokens", "revoke", "--account", "team", "--device", "laptop", "--database", server.database])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        try await server.start()
        try await phone.check(["invalidate", "welcome"])
        try await phone.check(["sync"])
        #expect(await within(60) { await daemon.waitForLog("the server refuses to sync") }, "\(daemon.log)")
        #expect(try await laptop.status("welcome").status != "invalidated")

        let token = try await server.token(device: "laptop")
        try await laptop.check(["init", "--server", server.url, "--token", token, "--device", "laptop"])
        let watched = try await laptop.run(["watch", "welcome", "--until", "invalidated", "--timeout", "90"])
        #expect(watched.status == 0, "\(watched.stderr)\n\(daemon.log)")
        #expect(try await laptop.syncState()["state"] as? String == "connected")
    }
}

extension TestAgent {
    /// `sync-status --json`, decoded.
    func syncState() async throws -> [String: Any] {
        let json = try await check(["sync-status", "--json"])
        return try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
    }
}

/// `body`'s answer, or `false` when `seconds` pass first (a bound on a wait for a real process's
/// log line, which is otherwise unbounded; never a way to wait for something). The body goes on in
/// the background until it ends (a log wait ends when its process does).
func within(_ seconds: Int, _ body: @escaping @Sendable () async -> Bool) async -> Bool {
    let once = Once()
    return await withCheckedContinuation { continuation in
        Task {
            let answer = await body()
            if once.claim() { continuation.resume(returning: answer) }
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            if once.claim() { continuation.resume(returning: false) }
        }
    }
}

/// Claimed once: the first to ask gets `true`.
final class Once: Sendable {
    private let claimed = Mutex(false)

    func claim() -> Bool {
        claimed.withLock { done in
            defer { done = true }
            return !done
        }
    }
}
