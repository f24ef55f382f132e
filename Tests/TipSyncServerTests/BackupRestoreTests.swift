import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// An operator restores an older backup of the server's database: the log is rewound, and positions
/// the old log handed out will be handed out again for other changes. A device holding a cursor from
/// the lost tail must never silently skip those changes.
@Suite struct BackupRestoreTests {
    @Test func cursorsFromALostTailAreRefusedAndRotationRefusesTheRest() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone", "laptop", "tablet"])
        let phone = DeviceIdentity(accountID: fixture.accountID, device: "phone")
        _ = try await fixture.store.push(parameterChanges(device: "phone", seqs: 1...2), from: phone)

        // The nightly backup (SQLite's online backup API, as deploy/README.md says), then more pushes.
        let backupPath = Scratch.path("tipsync-backup", pathExtension: "sqlite").path
        try fixture.store.pool.backup(to: try DatabaseQueue(path: backupPath))
        _ = try await fixture.store.push(parameterChanges(device: "phone", seqs: 3...4, value: 1), from: phone)

        // The laptop pulls everything from the live server: its cursor is past the backup.
        let laptopCursor = try await fixture.app().test(.router) { client in
            try await client.execute(
                uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")
            ) {
                let page = try decode(PullResponse.self, $0.body)
                #expect(page.changes.count == 4)
                return page.cursor
            }
        }

        // The live database is lost; the backup is restored and served.
        let restored = try SQLiteSyncStore(path: backupPath)
        try await restored.migrate()
        let restoredFixture = ServerFixture(store: restored, accountID: fixture.accountID, tokens: fixture.tokens)
        let pull = "/v1/pull?cursor=\(laptopCursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
        try await restoredFixture.app().test(.router) { client in
            // 1. Beyond the end of the restored log: refused at once, before any long-poll wait.
            try await client.execute(uri: pull + "&wait=30", method: .get, headers: fixture.headers("laptop")) {
                #expect($0.status == .badRequest)
                let error = try decode(ErrorBody.self, $0.body).error
                #expect(error.code == "invalid_cursor" && error.message.contains("beyond the end"))
            }
            // 2. Other devices push before the laptop comes back: the log grows past its cursor again.
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("tablet"),
                body: try body(
                    PushRequest(changes: (1...3).map { change("tablet", $0, .parameter(id: "t", value: .int($0))) }))
            ) { #expect($0.status == .ok) }
            // Without rotation that cursor reads again, and the laptop would never see the tablet's first
            // changes: what `tipsync-server rotate-cursors` (a documented restore step) prevents.
            try await client.execute(uri: pull, method: .get, headers: fixture.headers("laptop")) {
                let page = try decode(PullResponse.self, $0.body)
                #expect(page.changes.count < 3)
            }
            _ = try await restored.rotateCursorGeneration()
            try await client.execute(uri: pull, method: .get, headers: fixture.headers("laptop")) {
                #expect($0.status == .badRequest)
                let error = try decode(ErrorBody.self, $0.body).error
                #expect(error.code == "invalid_cursor" && error.message.contains("rotated"))
            }
            // What the client does then: pull from the start, and get everything the server holds.
            try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")) {
                let page = try decode(PullResponse.self, $0.body)
                #expect(page.changes.count == 5 && !page.more)
            }
            // A bare position (a cursor from a server before generations existed, when positions were
            // server-wide) is refused like anything else this server did not mint.
            for (cursor, status) in [
                ("1", HTTPResponse.Status.badRequest), ("999", .badRequest), ("a.b.1", .badRequest),
            ] {
                try await client.execute(
                    uri: "/v1/pull?cursor=\(cursor)", method: .get, headers: fixture.headers("laptop")
                ) {
                    #expect($0.status == status, "cursor \(cursor)")
                }
            }
        }
    }

    @Test func aDeviceWithNothingNewRepushesWhatTheRestoredServerLost() async throws {
        let fixture = try await ServerFixture.make()
        let backupPath = Scratch.path("tipsync-backup", pathExtension: "sqlite").path
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        @Sendable func client(_ replica: TipsReplica, _ port: Int) -> SyncClient {
            SyncClient(
                replica: replica,
                configuration: SyncConfiguration(
                    server: URL(string: "http://127.0.0.1:\(port)")!, token: fixture.tokens[replica.deviceID]!))
        }
        try phone.setParameter("plan", to: .string("free"))
        try await fixture.app().test(.live) { server in
            try await client(phone, server.port!).syncOnce()
            try fixture.store.pool.backup(to: try DatabaseQueue(path: backupPath))
            // Acknowledged after the backup: the phone counts these as pushed.
            try phone.invalidate(tip: "favorite", reason: .tipClosed)
            try phone.setParameter("plan", to: .string("pro"))
            try await client(phone, server.port!).syncOnce()
        }
        #expect(try phone.syncProgress.pushedSeq == 3)

        // The backup is restored; the phone has nothing new, yet its next round sends what was lost.
        let restored = try SQLiteSyncStore(path: backupPath)
        try await restored.migrate()
        #expect(try await restored.highestSeq(account: fixture.accountID, device: "phone") == 1)
        let restoredFixture = ServerFixture(store: restored, accountID: fixture.accountID, tokens: fixture.tokens)
        try await restoredFixture.app().test(.live) { server in
            try await client(phone, server.port!).syncOnce()
            try await client(laptop, server.port!).syncOnce()
        }
        #expect(try await restored.highestSeq(account: fixture.accountID, device: "phone") == 3)
        #expect(laptop.status(of: TipDefinition(id: "favorite", title: "F")) == .invalidated(.tipClosed))
        #expect(laptop.state.parameters["plan"]?.value == .string("pro"))
    }

    @Test func theReferenceClientRecoversFromARefusedCursorByPullingEverything() async throws {
        // The client side of `invalid_cursor`: drop the cursor, pull from the start, converge.
        let fixture = try await ServerFixture.make()
        let phone = DeviceIdentity(accountID: fixture.accountID, device: "phone")
        _ = try await fixture.store.push(
            [change("phone", 1, .eligibility(tip: "favorite", state: .invalidated(.tipClosed)))], from: phone)
        let laptop = try makeDevice("laptop")
        // A cursor from a log this server no longer has.
        try laptop.updateSyncProgress { $0.pullCursor = "0123456789abcdef.99" }
        try await fixture.app().test(.live) { client in
            let url = URL(string: "http://127.0.0.1:\(client.port!)")!
            let sync = SyncClient(
                replica: laptop, configuration: SyncConfiguration(server: url, token: fixture.tokens["laptop"]!))
            try await sync.syncOnce()
        }
        #expect(laptop.status(of: TipDefinition(id: "favorite", title: "F")) == .invalidated(.tipClosed))
        #expect(try laptop.syncProgress.pullCursor?.hasSuffix(".1") == true)
    }
}
