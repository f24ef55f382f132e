import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncCore
import TipSyncServer
import TipSyncServerTestSupport

/// A device name the server already knows, on a new, empty replica (an app reinstalled with the same
/// device name, a replica file deleted): its changes would number from 1 again and the server would
/// take them for duplicates — lost without a word. protocol.md §7, "A device whose storage was lost".
@Suite struct ReinstalledDeviceTests {
    struct Dismissable: Tip {
        var id: String { "dismissable" }
        var title: String { "Dismiss me" }
    }

    @Test func aReinstalledDeviceNeitherLosesItsNewChangesNorForgetsItsOldOnes() async throws {
        let fixture = try await ServerFixture.make()
        let before = try makeDevice("phone")
        let after = try makeDevice("phone")  // the same device name, a new replica
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            func client(_ replica: TipsReplica) -> SyncClient {
                SyncClient(
                    replica: replica,
                    configuration: SyncConfiguration(
                        server: URL(string: "http://127.0.0.1:\(port)")!, token: fixture.tokens[replica.deviceID]!))
            }
            try Dismissable().invalidate(reason: .tipClosed, in: before)
            try before.setParameter("plan", to: .string("free"))
            try await client(before).syncOnce()

            // Offline first, after the reinstall.
            try after.donate(event: "opened", info: .object(["after": .bool(true)]))
            try after.setParameter("theme", to: .string("dark"))
            try await client(after).syncOnce()
            #expect(Dismissable().status(in: after) == .invalidated(.tipClosed), "its old dismissal came back")
            #expect(after.parameterValue("plan") == .string("free"))
            #expect(try after.lastLocalSeq == 4)
            #expect(try after.syncProgress.pushedSeq == 4)

            try await client(laptop).syncOnce()
            #expect(laptop.parameterValue("theme") == .string("dark"), "the new changes reached the other device")
            #expect(laptop.state.donations(of: "opened").map(\.id) == ["phone:3"])
            #expect(Dismissable().status(in: laptop) == .invalidated(.tipClosed))

            // Its next change continues the log, and a restart keeps all of it.
            try after.setParameter("theme", to: .string("light"))
            try await client(after).syncOnce()
            try await client(laptop).syncOnce()
            #expect(laptop.parameterValue("theme") == .string("light"))
            let reopened = try TipsReplica(
                directory: after.directory, deviceID: "phone", clock: .system, environment: [:])
            #expect(reopened.state == after.state)
            #expect(try reopened.lastLocalSeq == 5)
        }
    }

    /// The same, when the new replica's first request is a pull (`pull()`, as an app that only
    /// reads first would call it): a pull's `highestSeq` must not mark its unsent changes, numbered
    /// from 1, as acknowledged. protocol.md §7: the device check comes before the first push **or pull**.
    @Test func aReinstalledDeviceWhoseFirstRequestIsAPullKeepsItsNewChanges() async throws {
        let fixture = try await ServerFixture.make()
        let before = try makeDevice("phone")
        let after = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            func client(_ replica: TipsReplica) -> SyncClient {
                SyncClient(
                    replica: replica,
                    configuration: SyncConfiguration(
                        server: URL(string: "http://127.0.0.1:\(port)")!, token: fixture.tokens[replica.deviceID]!))
            }
            try Dismissable().invalidate(reason: .tipClosed, in: before)
            try before.setParameter("plan", to: .string("free"))
            try await client(before).syncOnce()

            try after.setParameter("theme", to: .string("dark"))
            let afterClient = client(after)
            try await afterClient.pull()
            #expect(Dismissable().status(in: after) == .invalidated(.tipClosed), "its old dismissal came back")
            try await afterClient.push()
            #expect(try after.syncProgress.pushedSeq == after.lastLocalSeq)
            try await client(laptop).syncOnce()
            #expect(laptop.parameterValue("theme") == .string("dark"), "the change made before the pull is not lost")
            #expect(laptop.parameterValue("plan") == .string("free"))
        }
    }
}
