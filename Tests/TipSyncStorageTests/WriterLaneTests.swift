import Foundation
import GRDB
import Synchronization
import Testing
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncServer

/// The one way to SQLite's writer (``WriterLane``): a write runs in place, on the thread that asks,
/// only when nothing holds or waits for the writer; a queued write never reaches the writer's queue
/// ahead of one running in place.
@Suite(.timeLimit(.minutes(2))) struct WriterLaneTests {
    static func lane() throws -> WriterLane {
        let pool = try DatabasePool(path: Scratch.path("writer-lane", pathExtension: "sqlite").path)
        try pool.write { db in try db.execute(sql: "CREATE TABLE item (name TEXT NOT NULL)") }
        return WriterLane(pool: pool)
    }

    @Test func aWriteThatFindsTheWriterIdleRunsOnTheThreadThatAsks() throws {
        let lane = try Self.lane()
        let asking = pthread_self()
        let ran = lane.inPlace { db -> Bool in
            try? db.execute(sql: "INSERT INTO item (name) VALUES ('a')")
            return pthread_equal(pthread_self(), asking) != 0
        }
        #expect(ran == true)
        #expect(try lane.pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM item") } == ["a"])
        #expect(lane.counts == (inPlace: 1, queued: 0))
    }

    @Test func aWriteThatFindsTheWriterHeldIsNotRunInPlace() async throws {
        let lane = try Self.lane()
        let gate = DispatchSemaphore(value: 0)
        lane.asyncWriteWithoutTransaction { _ in gate.wait() }
        let ran = Mutex(false)
        #expect(lane.inPlace { _ in ran.withLock { $0 = true } } == nil)
        #expect(ran.withLock { $0 } == false)
        gate.signal()
        // Free again once the holder has ended (it leaves the lane just after its work).
        while !lane.isIdle { await Task.yield() }
        #expect(lane.inPlace { _ in 1 } == 1)
    }

    /// A write queued while another runs in place reaches the writer's queue only after it ends: had
    /// it reached the queue first, the one in place would wait for it on its thread.
    @Test func aWriteQueuedDuringOneInPlaceWaitsForItsEnd() async throws {
        let lane = try Self.lane()
        let (ran, ranNow) = AsyncStream<Void>.makeStream()
        let deferredDuring = lane.inPlace { db -> Int in
            lane.asyncWriteWithoutTransaction { db in
                try? db.execute(sql: "INSERT INTO item (name) VALUES ('queued')")
                ranNow.yield()
            }
            try? db.execute(sql: "INSERT INTO item (name) VALUES ('in place')")
            return lane.deferredCount
        }
        #expect(deferredDuring == 1)
        #expect(lane.deferredCount == 0)
        var iterator = ran.makeAsyncIterator()
        await iterator.next()
        let names = try await lane.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM item ORDER BY rowid")
        }
        #expect(names == ["in place", "queued"])
    }

    /// Work that takes the writer by GRDB's own means (a migration, releasing memory) holds the lane.
    @Test func workHoldingTheWriterKeepsWritesOutOfPlace() throws {
        let lane = try Self.lane()
        let during = lane.holding { lane.inPlace { _ in 1 } }
        #expect(during == nil)
        #expect(lane.inPlace { _ in 1 } == 1)
    }
}
