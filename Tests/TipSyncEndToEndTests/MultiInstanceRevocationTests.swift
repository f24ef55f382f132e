import Foundation
import Testing
import TipSync
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Two real `tipsync-server` processes on one PostgreSQL database, as a fleet runs them: a
/// revocation or an erasure through one instance's admin API ends the streams open on the other.
@Suite struct MultiInstanceRevocationTests {
    struct Fleet {
        let database: String
        let first: ServerUnderTest
        let second: ServerUnderTest
        let adminKey: String
        let tokens: [String: String]
        /// The end of a chunked response: the stream is over (the connection itself stays open for
        /// the next request, as HTTP/1.1 keeps it).
        static let lastChunk = "0\r\n\r\n"

        static func start() async throws -> Fleet {
            let database = try await ThrowawayPostgres.freshDatabase()
            #expect(
                try await ServerProcess.run(["accounts", "create", "alice", "--database", database]).status == 0)
            var tokens: [String: String] = [:]
            for device in ["phone", "laptop"] {
                let created = try await ServerProcess.run([
                    "tokens", "create", "--account", "alice", "--device", device, "--database", database,
                ])
                try #require(created.status == 0, "\(created.stderr)")
                tokens[device] = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let key = try await ServerProcess.run(["admin-keys", "create", "--database", database])
            try #require(key.status == 0, "\(key.stderr)")
            let adminKey = try #require(
                key.stdout.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("tsa_") }.map(String.init))
            let arguments = ["--rate-requests", "0", "--rate-changes", "0"]
            let first = try await ServerUnderTest.start(database: database, arguments: arguments)
            let second = try await ServerUnderTest.start(database: database, arguments: arguments)
            // Each instance hears the other once its LISTEN is in place (a stream opened before that
            // is ended when it is, so nothing missed in between goes unnoticed).
            for server in [first, second] {
                try #require(await server.process.stderr.waitFor("watching pushes, revocations and erasures"))
            }
            return Fleet(database: database, first: first, second: second, adminKey: adminKey, tokens: tokens)
        }

        func stop() async {
            await first.kill()
            await second.kill()
        }

        /// Opens `/v1/live` for `device` on `server` and waits for its `ready` event.
        func live(_ device: String, on server: ServerUnderTest) async throws -> RawConnection {
            let connection = try await offPool { try RawConnection(port: server.port) }
            connection.send(
                "GET /v1/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokens[device]!)\r\n\r\n")
            let opened = await connection.read(until: "event: ready", within: 30)
            try #require(opened.hasPrefix("HTTP/1.1 200") && opened.contains("event: ready"), "\(opened)")
            return connection
        }

        func admin(_ method: String, _ path: String, on server: ServerUnderTest)
            async throws -> (status: Int, body: String)
        {
            let (status, body) = try await RawConnection.exchange(
                port: server.port, method: method, path: path, headers: ["Authorization": "Bearer \(adminKey)"])
            return (status, String(decoding: body, as: UTF8.self))
        }

        func pullStatus(_ device: String, on server: ServerUnderTest) async throws -> Int {
            try await RawConnection.exchange(
                port: server.port, method: "GET", path: "/v1/pull",
                headers: ["Authorization": "Bearer \(tokens[device]!)"]
            ).status
        }
    }

    @Test func revokingOnOneInstanceEndsTheDevicesStreamOnTheOther() async throws {
        let fleet = try await Fleet.start()
        let phone = try await fleet.live("phone", on: fleet.second)
        let laptop = try await fleet.live("laptop", on: fleet.second)

        let started = ContinuousClock.now
        let revoked = try await fleet.admin("DELETE", "/admin/v1/accounts/alice/devices/phone/tokens", on: fleet.first)
        #expect(revoked.status == 200, "\(revoked.body)")
        // The bound only keeps a broken build from hanging the suite; the figure is printed below.
        let ended = await phone.read(until: Fleet.lastChunk, within: 30)
        let elapsed = ContinuousClock.now - started
        #expect(ended.hasSuffix(Fleet.lastChunk), "the phone's stream on the other instance stayed open")
        print("revocation sent to one instance ended the stream on the other after \(elapsed)")

        // The laptop's stream on the same instance is untouched: a change pushed through the first
        // instance still reaches it.
        let change = Change(
            device: "laptop", seq: 1, hlc: HLC(milliseconds: 1_700_000_000_000, counter: 0),
            operation: .parameter(id: "welcome", value: .bool(true)))
        let pushed = try await RawConnection.exchange(
            port: fleet.first.port, method: "POST", path: "/v1/push",
            headers: ["Authorization": "Bearer \(fleet.tokens["laptop"]!)", "Content-Type": "application/json"],
            body: Array(try JSONCoding.encoder.encode(PushRequest(changes: [change]))))
        #expect(pushed.status == 200)
        let delivered = await laptop.read(until: "event: changes", within: 30)
        #expect(delivered.contains("event: changes"), "\(delivered)")

        // The second instance knew the phone's token (its stream), and learns nothing of the
        // revocation but through the database: its next push and pull there are refused anyway.
        let refused = try await RawConnection.exchange(
            port: fleet.second.port, method: "POST", path: "/v1/push",
            headers: ["Authorization": "Bearer \(fleet.tokens["phone"]!)", "Content-Type": "application/json"],
            body: Array(
                try JSONCoding.encoder.encode(
                    PushRequest(changes: [
                        Change(
                            device: "phone", seq: 1, hlc: HLC(milliseconds: 1_700_000_000_000, counter: 0),
                            operation: .parameter(id: "welcome", value: .bool(false)))
                    ]))))
        #expect(refused.status == 401)
        #expect(try await fleet.pullStatus("phone", on: fleet.second) == 401)
        #expect(try await fleet.pullStatus("phone", on: fleet.first) == 401)
        #expect(try await fleet.pullStatus("laptop", on: fleet.second) == 200)
        await fleet.stop()
    }

    @Test func erasingOnOneInstanceEndsEveryStreamOfTheAccountOnTheOther() async throws {
        let fleet = try await Fleet.start()
        let phone = try await fleet.live("phone", on: fleet.second)
        let laptop = try await fleet.live("laptop", on: fleet.first)

        let erased = try await fleet.admin("DELETE", "/admin/v1/accounts/alice", on: fleet.first)
        #expect(erased.status == 200, "\(erased.body)")
        #expect(await phone.read(until: Fleet.lastChunk, within: 30).hasSuffix(Fleet.lastChunk))
        #expect(await laptop.read(until: Fleet.lastChunk, within: 30).hasSuffix(Fleet.lastChunk))
        #expect(try await fleet.pullStatus("phone", on: fleet.second) == 401)
        #expect(try await fleet.pullStatus("laptop", on: fleet.second) == 401)
        #expect(try await fleet.admin("GET", "/admin/v1/accounts/alice", on: fleet.second).status == 404)
        await fleet.stop()
    }

    /// When an instance's LISTEN is (re)established it may have missed events: every stream open
    /// on it ends, so its client reconnects and is checked again.
    @Test func streamsOpenedBeforeTheInstanceHeardTheOthersEndWhenItDoes() async throws {
        let notifier = ChangeNotifier()
        let stream = notifier.subscribe(DeviceIdentity(accountID: 1, device: "phone"))
        let other = notifier.subscribe(DeviceIdentity(accountID: 2, device: "laptop"))
        notifier.handle(.watching)
        for await _ in stream {}
        for await _ in other {}
        #expect(notifier.count == 0)
    }
}
