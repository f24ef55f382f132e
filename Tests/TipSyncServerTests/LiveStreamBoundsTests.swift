import Foundation
import Testing
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// What one device's live streams can hold in the server's memory is bounded (issue 59, item 2:
/// one device that pushed 11,000 changes of 1 KB and opened 100 streams at distinct cursors without
/// reading them took the server from 60 MiB to 1,650 MiB, held while the sockets stayed open). A
/// page is bounded by bytes (``ChangeTexts/maxPageBytes``, tested on both backends in
/// ``StorageContractTests``); the next page is written only after the previous one drained; a stream
/// whose client has not read within `--live-stall-timeout` is ended; a device holds at most
/// `--max-live-streams-per-device` streams.
@Suite(.timeLimit(.minutes(5))) struct LiveStreamBoundsTests {
    /// A log of about 12 MB: far more than the kernel's socket buffers hold for a client that never
    /// reads.
    static func fillLog(_ fixture: ServerFixture) async throws {
        let phone = DeviceIdentity(accountID: fixture.accountID, device: "phone")
        let padding = String(repeating: "x", count: 3000)
        for batch in 0..<10 {
            let changes = (1...400).map { index in
                let seq = Int64(batch * 400 + index)
                return Change(
                    device: "phone", seq: seq, hlc: HLC(milliseconds: 1_800_000_000_000 + UInt64(seq), counter: 0),
                    operation: .parameter(id: "p-\(seq)", value: .string(padding)))
            }
            _ = try await fixture.store.push(changes, from: phone)
        }
    }

    /// A `/metrics` value of a server process.
    static func metric(_ port: Int, _ name: String) async throws -> Double? {
        let text = String(
            decoding: try await RawConnection.exchange(port: port, method: "GET", path: "/metrics").body, as: UTF8.self)
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
            Double($0.dropFirst(name.count + 1))
        }
    }

    /// A real server process (its event loops and timers its own, whatever else the test process
    /// runs), its log filled in the database beforehand.
    @Test func aStreamWhoseClientDoesNotReadIsEndedAtTheStallBound() async throws {
        let path = Scratch.path("tipsync-stall").appendingPathComponent("server.sqlite").path
        let database = "sqlite:" + path
        #expect(try await ServerProcess.run(["accounts", "create", "alice", "--database", database]).status == 0)
        let token = try await ServerProcess.run([
            "tokens", "create", "--account", "alice", "--device", "laptop", "--database", database,
        ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            try await ServerProcess.run([
                "tokens", "create", "--account", "alice", "--device", "phone", "--database", database,
            ]).status == 0)
        let store = try SQLiteSyncStore(path: path)
        let account = try #require(try await store.accountID(named: "alice"))
        try await Self.fillLog(ServerFixture(store: store, accountID: account))
        let server = try await ServerUnderTest.start(
            database: database, arguments: ["--live-stall-timeout", "5"])
        defer { server.process.terminate() }
        let (status, pulled) = try await RawConnection.exchange(
            port: server.port, method: "GET", path: "/v1/pull?limit=1", headers: ["Authorization": "Bearer \(token)"])
        #expect(status == 200)
        let cursor = try JSONCoding.decode(PullResponse.self, from: pulled).cursor
        let start = try #require(cursor.split(separator: ".").first).appending(".0")
        let request =
            "GET /v1/live?cursor=\(start)&limit=5000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n"
        let reader = try await offPool { [port = server.port] in try RawConnection(port: port) }
        reader.send(request)
        // The client reads nothing: the stream's write waits, then the stream is ended.
        try await eventually { try await Self.metric(server.port, "tipsync_live_streams_stalled_total") == 1 }
        // Then what the kernel held is read, and the connection is found closed.
        let (_, closed) = await reader.readUntilClosed(within: LiveConnectionTests.bound)
        #expect(closed)
        try await eventually { try await Self.metric(server.port, "tipsync_live_connections") == 0 }

        // A client that reads gets the whole log over the same bound: the bound ends only stalls.
        let healthy = try await offPool { [port = server.port] in try RawConnection(port: port) }
        healthy.send(request)
        let text = await healthy.read(until: #"\#(start.split(separator: ".")[0]).4000","#, within: 120)
        #expect(text.contains(".4000\",\"from\""), "the last page arrived")
        #expect(try await Self.metric(server.port, "tipsync_live_streams_stalled_total") == 1)
    }

    @Test func openingMoreStreamsThanTheDeviceMayHoldEndsItsOldest() async throws {
        let configure: (inout ServerConfiguration) -> Void = { $0.maxLiveStreamsPerDevice = 2 }
        try await LiveConnectionTests.withServer(configure: configure) { server, fixture in
            var streams: [RawConnection] = []
            for _ in 0..<3 {
                let stream = try await offPool { [port = server.port] in try RawConnection(port: port) }
                stream.send(
                    "GET /v1/live HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.tokens["laptop"]!)\r\n\r\n")
                #expect(await stream.read(until: "event: ready", within: LiveConnectionTests.bound).contains("ready"))
                streams.append(stream)
            }
            let (_, closed) = await streams[0].readUntilClosed(within: LiveConnectionTests.bound)
            #expect(closed, "the oldest stream ended")
            try await eventually { server.metric("tipsync_live_connections") == 2 }
            // Another device's streams are its own.
            let phone = try await offPool { [port = server.port] in try RawConnection(port: port) }
            phone.send("GET /v1/live HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.tokens["phone"]!)\r\n\r\n")
            #expect(await phone.read(until: "event: ready", within: LiveConnectionTests.bound).contains("ready"))
            try await eventually { server.metric("tipsync_live_connections") == 3 }
        }
    }
}
