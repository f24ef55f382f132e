import Foundation
import Testing
import TipSync
import TipSyncCore

/// Two replicas opened on one store directory stand for two processes sharing it (a daemon and a
/// CLI invocation): each has its own connections, so SQLite sees them as separate writers.
@Suite struct SharedStoreTests {
    @Test func writersSharingAStoreNeverCollideAndSeeEachOther() throws {
        let clock = ManualClock()
        let directory = temporaryDirectory("shared")
        let daemon = try makeReplica("phone", clock: clock, directory: directory)
        let cli = try makeReplica("phone", clock: clock, directory: directory)
        let tip = TipDefinition(id: "favorite", title: "F", options: TipOptions(maxDisplayCount: 5))

        try cli.invalidate(tip: "favorite", reason: .tipClosed)
        // The daemon's next write adopts the CLI's first: no sequence number is reused.
        clock.advance(by: 1)
        try daemon.recordDisplay(tip: "other")
        clock.advance(by: 1)
        try cli.donate(event: "opened")

        let log = try daemon.localChanges()
        #expect(log.map(\.seq) == [1, 2, 3])
        #expect(log.map(\.kind) == [.eligibility, .display, .donation])
        #expect(zip(log, log.dropFirst()).allSatisfy { $0.hlc < $1.hlc })

        // Reads catch up on demand.
        #expect(try daemon.reloadIfChangedElsewhere())
        #expect(daemon.status(of: tip) == .invalidated(.tipClosed))
        try cli.reloadIfChangedElsewhere()
        #expect(daemon.state == cli.state)
        let again = try daemon.reloadIfChangedElsewhere()
        #expect(again == false)

        // A third opening sees everything on disk.
        let reopened = try makeReplica("phone", clock: clock, directory: directory)
        #expect(reopened.state == daemon.state)
    }

    @Test func anotherProcessesLocalChangeWakesTheSyncTrigger() async throws {
        let clock = ManualClock()
        let directory = temporaryDirectory("shared")
        let daemon = try makeReplica("phone", clock: clock, directory: directory)
        let cli = try makeReplica("phone", clock: clock, directory: directory)
        var wakeups = daemon.localChangeNotifications().makeAsyncIterator()
        try cli.donate(event: "opened")
        #expect(try daemon.reloadIfChangedElsewhere())
        let woke: Void? = await wakeups.next()
        #expect(woke != nil)
        #expect(try daemon.outbox(limit: 10).map(\.seq) == [1])
    }
}

@Suite struct SharedStoreDonationTests {
    @Test func donationsFromTwoProcessesAreNeverMistakenForOne() throws {
        let directory = temporaryDirectory("shared")
        let daemon = try makeReplica("phone", directory: directory)
        let cli = try makeReplica("phone", directory: directory)
        try daemon.donate(event: "opened")
        try cli.donate(event: "opened")  // its memory still thinks the next sequence number is 1
        try daemon.donate(event: "opened")
        try cli.reloadIfChangedElsewhere()
        #expect(cli.state.events["opened"]?.donations.count == 3)
        #expect(Set(cli.state.events["opened"]?.donations.map(\.id) ?? []).count == 3)
    }

    @Test func displaysFromTwoProcessesBothCount() throws {
        let directory = temporaryDirectory("shared")
        let daemon = try makeReplica("phone", directory: directory)
        let cli = try makeReplica("phone", directory: directory)
        try daemon.recordDisplay(tip: "welcome", duration: 2)
        try cli.recordDisplay(tip: "welcome", duration: 3)  // its memory has not seen the first display
        try daemon.reloadIfChangedElsewhere()
        #expect(daemon.displayTotals(ofTip: "welcome") == (2, 5))
    }
}
