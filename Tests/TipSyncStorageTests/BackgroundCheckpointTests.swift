import Foundation
import GRDB
import Testing
import TipSync
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 59: SQLite checkpointed its write-ahead log in the commit that passed 1,000 pages, and every
/// push of the group waited for the copy and the sync (four devices stalled together, ~16 ms, twice
/// every 15 s). While a server runs, commits no longer checkpoint; a connection of its own does.
@Suite struct BackgroundCheckpointTests {
    static func logBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0
    }

    /// Pushes about `megabytes` MB of changes of one device, `from` its seq on.
    static func push(megabytes: Int, from first: Int64, _ store: SQLiteSyncStore, _ identity: DeviceIdentity)
        async throws
    {
        let padding = String(repeating: "x", count: 4000)
        for batch in 0..<Int64(megabytes * 4) {
            let changes = (0..<64).map { index -> Change in
                let seq = first + batch * 64 + Int64(index)
                return change("phone", seq, .parameter(id: "p\(seq)", value: .string(padding)))
            }
            _ = try await store.push(changes, from: identity)
        }
    }

    @Test func commitsLeaveTheLogToTheCheckpointerWhileAServerRuns() async throws {
        let fixture = try await ServerFixture.make()
        let store = fixture.store
        let path = store.pool.path
        let identity = try #require(
            try await store.identity(forTokenHash: TokenHasher.hash(fixture.tokens["phone"]!)))
        // Alone, SQLite checkpoints in the commit: the log stays near its 1,000 pages (4 MB).
        try await Self.push(megabytes: 12, from: 1, store, identity)
        #expect(Self.logBytes(path) < 6_000_000, "\(Self.logBytes(path))")

        // Beside a server (the background service does this): commits do not checkpoint.
        try await store.setCommitsCheckpoint(false)
        try await store.truncateWriteAheadLog()
        try await Self.push(megabytes: 12, from: 1 + 12 * 4 * 64, store, identity)
        #expect(Self.logBytes(path) > 10_000_000, "\(Self.logBytes(path))")

        // The checkpointer's connection moves the whole log into the database beside the writer.
        let checkpointer = try DatabaseQueue(path: path)
        #expect(store.logPages.count > 2_500)
        let moved = try await SQLiteSyncStore.checkpointPassively(checkpointer)
        #expect(moved.log == store.logPages.count && moved.checkpointed == moved.log, "\(moved)")
        // The next commit starts the log again from its beginning: it stops growing.
        let before = Self.logBytes(path)
        try await Self.push(megabytes: 2, from: 1 + 24 * 4 * 64, store, identity)
        #expect(Self.logBytes(path) == before)
        #expect(try await store.logCount(account: fixture.accountID) == 26 * 4 * 64)
    }

    @Test func theServiceLeavesCommitsToCountAndTheirCheckpointsToItself() async throws {
        let fixture = try await ServerFixture.make()
        let store = fixture.store
        let identity = try #require(
            try await store.identity(forTokenHash: TokenHasher.hash(fixture.tokens["phone"]!)))
        let running = Task { try await store.checkpointInBackground(every: .seconds(3600)) }
        // The service's first step, before its first wait: commits count the log's pages.
        var seq: Int64 = 0
        while store.logPages.count == 0 {
            seq += 1  // a fresh change each time: a commit that writes pages
            _ = try await store.push([change("phone", seq, .parameter(id: "p", value: .int(seq)))], from: identity)
            await Task.yield()
        }
        running.cancel()
        try await running.value
        // Stopped: commits checkpoint again (the log stays near its 1,000 pages).
        try await store.truncateWriteAheadLog()
        let highest = try await store.highestSeq(account: fixture.accountID, device: "phone") ?? 0
        try await Self.push(megabytes: 12, from: highest + 1, store, identity)
        #expect(Self.logBytes(store.pool.path) < 6_000_000, "\(Self.logBytes(store.pool.path))")
    }
}
