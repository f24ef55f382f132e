import Foundation
import GRDB
import Testing
import TipSyncCore

@testable import TipSync

/// The sync client's bookkeeping: its rules (``SyncProgress``), its storage, and that one server
/// answer is one transaction — a pull page's changes and the cursor after them land together.
@Suite struct SyncProgressTests {
    struct Refused: Error {}

    @Test func aPullThatReachedTheEndIsRememberedAndAnOlderReplicaWithACursorHasSynced() throws {
        let directory = temporaryDirectory("has-synced")
        let replica = try makeReplica("phone", directory: directory)
        #expect(!replica.hasSynced)
        // Mid-way through a first sync: a cursor, not yet the end of the log.
        try replica.updateSyncProgress { $0.pullCursor = "c1" }
        #expect(!(try makeReplica("phone", directory: directory).hasSynced))
        try replica.updateSyncProgress {
            $0.pullCursor = "c2"
            $0.hasSynced = true
        }
        #expect(try makeReplica("phone", directory: directory).hasSynced)
        // A cursor that stops working (re-pulled from the start) does not undo it.
        try replica.updateSyncProgress { $0.pullCursor = nil }
        #expect(try makeReplica("phone", directory: directory).hasSynced)
        // What a version before the flag left: a cursor and no flag row.
        try replica.updateSyncProgress { $0.pullCursor = "c3" }
        try replica.database.writer.write { db in try ReplicaDatabase.setMeta(.hasSynced, nil, db) }
        #expect(try makeReplica("phone", directory: directory).hasSynced)
    }

    @Test func theFirstSyncHoldIsOneRuleOverTheBookkeepingAndTheClock() throws {
        let clock = ManualClock()
        let replica = try makeReplica("phone", clock: clock)
        try replica.load(catalog: Catalog(validating: Array(#"{"tips":[{"id":"t","title":"T"}]}"#.utf8)))
        #expect(replica.status(ofTip: "t") == .available)
        #expect(try replica.holdForFirstSync(seconds: 5))
        #expect(replica.status(ofTip: "t") == .pending)
        clock.advance(by: 4.9)
        #expect(replica.status(ofTip: "t") == .pending)
        clock.advance(by: 0.2)
        #expect(replica.status(ofTip: "t") == .available)
        // A hold started again (the next launch) holds again until the first sync completes.
        #expect(try replica.holdForFirstSync(seconds: 5))
        #expect(replica.status(ofTip: "t") == .pending)
        try replica.updateSyncProgress { $0.hasSynced = true }
        #expect(replica.status(ofTip: "t") == .available)
        #expect(try replica.holdForFirstSync(seconds: 5) == false)
        #expect(FirstSyncHold(hasSynced: false, until: 10).holds(atMilliseconds: 9))
        #expect(!FirstSyncHold(hasSynced: false, until: 10).holds(atMilliseconds: 10))
        #expect(!FirstSyncHold(hasSynced: false, until: nil).holds(atMilliseconds: 0))
        #expect(!FirstSyncHold(hasSynced: true, until: 10).holds(atMilliseconds: 0))
    }

    /// A pulled page and a live page settle the bookkeeping through one rule (issue 55, item 4: it
    /// was written once per way a page arrives).
    @Test func aPageSettlesTheCursorTheFirstSyncTheClockAndWhatTheServerHolds() {
        var progress = SyncProgress()
        progress.setPushed(through: 5)
        progress.recordUncertainPush(through: 7)
        var page = PullResponse(changes: [], cursor: "g.10", more: true, snapshot: false, serverTime: 1)
        page.highestSeq = 7
        page.generation = "g"
        // A pull page that is not the last: the cursor moves, the device has not synced yet; the
        // server holds more than was acknowledged (a lost answer did arrive).
        #expect(progress.settle(after: page, reachesEnd: false, clockOffset: 250) == false)
        #expect(progress.pullCursor == "g.10" && !progress.hasSynced && progress.clockOffset == 250)
        #expect(progress.pushedSeq == 7 && progress.uncertainPush == nil && progress.serverGeneration == "g")
        // The last page says the server holds less than acknowledged: lost pushes, sent again.
        page.cursor = "g.12"
        page.highestSeq = 3
        #expect(progress.settle(after: page, reachesEnd: true) == true)
        #expect(progress.pushedSeq == 3 && progress.acknowledgedHighSeq == 7 && progress.hasSynced)
        #expect(progress.clockOffset == 250)
        // A live page carries no `highestSeq`: only the cursor, and that the device is in sync.
        var live = SyncProgress()
        let stream = PullResponse(changes: [], cursor: "g.13", more: false, snapshot: false, serverTime: 2)
        #expect(live.settle(after: stream, reachesEnd: true) == false)
        #expect(live.pullCursor == "g.13" && live.hasSynced && live.pushedSeq == 0)
    }

    @Test func theAcknowledgedHighMarkIsNeverLowered() {
        var progress = SyncProgress()
        progress.setPushed(through: 7)
        progress.setPushed(through: 3)  // a restored server lost 4...7
        #expect(progress.pushedSeq == 3)
        #expect(progress.acknowledgedHighSeq == 7)
    }

    @Test func anUnansweredPushIsSettledByAnAnswerThatCoversIt() {
        var progress = SyncProgress()
        progress.noteServer(holds: 0, generation: "g1")
        progress.recordUncertainPush(through: 5)
        progress.recordUncertainPush(through: 3)
        #expect(progress.uncertainPush == .init(seq: 5, generation: "g1"))
        progress.noteServer(holds: 4, generation: "g1")
        #expect(progress.uncertainPush != nil)
        progress.noteServer(holds: 5, generation: "g2")
        #expect(progress.uncertainPush == nil)
        #expect(progress.serverGeneration == "g2")
    }

    @Test func aRestampKeepsAnUnansweredPushUnlessTheServerProvablyNeverStoredIt() {
        var sameGeneration = SyncProgress(serverGeneration: "g1")
        sameGeneration.recordUncertainPush(through: 9)
        #expect(sameGeneration.keptThroughUncertainPush(held: 4, serverGeneration: "g1") == 0)
        #expect(sameGeneration.uncertainPush == nil)
        var restored = SyncProgress(serverGeneration: "g1")
        restored.recordUncertainPush(through: 9)
        #expect(restored.keptThroughUncertainPush(held: 4, serverGeneration: "g2") == 9)
        #expect(restored.keptThroughUncertainPush(held: 9, serverGeneration: "g2") == 0)
    }

    @Test func progressSurvivesARestartAndMovesTheClock() throws {
        let directory = temporaryDirectory()
        let replica = try makeReplica(directory: directory)
        try replica.updateSyncProgress { progress in
            progress.setPushed(through: 2)
            progress.pullCursor = "abc.3"
            progress.clockOffset = -5_000
            progress.recordUncertainPush(through: 4)
        }
        #expect(replica.clockOffset == -5_000)
        let reopened = try makeReplica(directory: directory)
        let progress = try reopened.syncProgress
        #expect(progress.pushedSeq == 2 && progress.acknowledgedHighSeq == 2)
        #expect(progress.pullCursor == "abc.3")
        #expect(progress.uncertainPush?.seq == 4)
        #expect(reopened.clockOffset == -5_000)
    }

    /// A page whose bookkeeping cannot be stored is not merged either (and the other way round): a
    /// device never holds a page's changes without the cursor after them, nor the cursor without them.
    @Test func aPageAndItsCursorAreStoredTogetherOrNotAtAll() throws {
        let other = try makeReplica("device-b")
        try other.setParameter("theme", to: .string("dark"))
        let page = try other.localChanges()
        let directory = temporaryDirectory()
        let replica = try makeReplica(directory: directory)
        #expect(throws: Refused.self) {
            try replica.applyRemote(page) { progress in
                progress.pullCursor = "c.1"
                throw Refused()
            }
        }
        #expect(try replica.syncProgress.pullCursor == nil)
        #expect(try makeReplica(directory: directory).parameterValue("theme") == .null)
        try replica.applyRemote(page) { $0.pullCursor = "c.1" }
        let reopened = try makeReplica(directory: directory)
        #expect(try reopened.syncProgress.pullCursor == "c.1")
        #expect(reopened.parameterValue("theme") == .string("dark"))
    }

    /// The bookkeeping is kept in memory between writes (issue 77, item 5: a reconnect read it from
    /// the database about eight times), and is never stale: whatever this replica writes, by any
    /// path, and whatever another connection to the file commits — another process's replica, a tool
    /// — is what the next read says; a write rolled back leaves what was there.
    @Test func theBookkeepingReadIsNeverStale() throws {
        let directory = temporaryDirectory("progress-cache")
        let replica = try makeReplica("phone", directory: directory)
        let otherProcess = try makeReplica("phone", directory: directory)
        #expect(try replica.syncProgress.pullCursor == nil)
        try replica.updateSyncProgress { $0.pullCursor = "c1" }
        #expect(try replica.syncProgress.pullCursor == "c1")
        #expect(try replica.syncProgress.pullCursor == "c1")
        try otherProcess.updateSyncProgress {
            $0.pullCursor = "c2"
            $0.setPushed(through: 3)
        }
        #expect(try replica.syncProgress.pullCursor == "c2")
        #expect(try replica.syncProgress.pushedSeq == 3)
        try replica.database.writer.write { db in try ReplicaDatabase.setMeta(.pullCursor, "c3", db) }
        #expect(try replica.syncProgress.pullCursor == "c3")
        let tool = try DatabaseQueue(path: directory.appendingPathComponent("replica.sqlite").path)
        try tool.write { db in try ReplicaDatabase.setMeta(.pullCursor, "c4", db) }
        #expect(try replica.syncProgress.pullCursor == "c4")
        #expect(throws: Refused.self) {
            try replica.updateSyncProgress {
                $0.pullCursor = "c5"
                throw Refused()
            }
        }
        #expect(try replica.syncProgress.pullCursor == "c4")
        #expect(try otherProcess.syncProgress.pullCursor == "c4")
        // A page merged with its cursor (the other write path) is read back too.
        _ = try replica.applyRemote([]) { $0.pullCursor = "c6" }
        #expect(try replica.syncProgress.pullCursor == "c6")
        #expect(try otherProcess.syncProgress.pullCursor == "c6")
    }
}
