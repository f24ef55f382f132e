import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport
import TipSyncTestSupport

/// A change the server refuses never stalls a device (protocol.md §17.2): it is set aside and
/// reported, the changes after it sync, and the device ends equal to the others.
@Suite struct RefusedChangeTests {
    /// The real server, except that it refuses (as a stricter server would) any change that writes
    /// the parameter `poison`: `422 invalid_change` naming it, as the server names a field.
    struct StricterServer: SyncTransport {
        let base: any SyncTransport

        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            if request.method == "POST", request.path == "/v1/push", let body = request.body,
                let push = try? JSONCoding.decode(PushRequest.self, from: body),
                let index = push.changes.firstIndex(where: {
                    if case .parameter(let id, _) = $0.operation { id == "poison" } else { false }
                })
            {
                let error = ErrorBody(
                    error: .init(code: "invalid_change", message: "changes[\(index)].value: this server refuses it"))
                return SyncHTTPResponse(status: 422, body: try JSONCoding.encoder.encode(error))
            }
            return try await base.send(request)
        }
    }

    @Test func aRefusedChangeIsSetAsideReportedAndTheRestSync() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let url = URL(string: "http://127.0.0.1:\(try #require(server.port))")!
            try phone.setParameter("a", to: .int(1))
            try phone.setParameter("poison", to: .int(1))
            try phone.donate(event: "opened")
            try phone.setParameter("b", to: .int(2))
            let reported = Mutex<[RefusedChange]>([])
            var configuration = SyncConfiguration(server: url, token: fixture.tokens["phone"]!)
            configuration.onRefusedChange = { refused in reported.withLock { $0.append(refused) } }
            let client = SyncClient(
                replica: phone, configuration: configuration,
                transport: StricterServer(base: SyncClient.defaultTransport(url)))
            try await client.syncOnce()

            let setAside = await client.setAside
            #expect(setAside.count == 1)
            #expect(reported.withLock { $0 } == setAside)
            #expect(setAside.first?.reason == "changes[1].value: this server refuses it")
            if case .parameter(let id, _) = setAside.first?.change.operation { #expect(id == "poison") }
            // The rest went on, numbered after the one set aside.
            #expect(try phone.lastLocalSeq == 3)
            #expect(try phone.outbox(limit: 10).isEmpty)
            #expect(phone.parameterValue("poison") == .null)
            #expect(phone.state.events["opened"]?.donations.map(\.id) == ["phone:2"])

            try await SyncClient(replica: laptop, configuration: .init(server: url, token: fixture.tokens["laptop"]!))
                .syncOnce()
            #expect(laptop.parameterValue("a") == .int(1) && laptop.parameterValue("b") == .int(2))
            #expect(laptop.parameterValue("poison") == .null)
            try await client.syncOnce()
            #expect(phone.state == laptop.state)
        }
    }

    /// Protocol revision 2.7 bounds a change to 64 KiB of canonical text (§3). A change that a writer
    /// older than that stored beyond it is refused by the real server with its position, set aside,
    /// and the changes after it sync (§17.2): the revision paragraph's promise to older clients.
    @Test func aChangeAnOlderWriterMadeBeyondTheSizeLimitIsSetAsideAndTheRestSync() async throws {
        let fixture = try await ServerFixture.make()
        let directory = Scratch.path("tipsync-device")
        do {
            let phone = try TipsReplica(directory: directory, deviceID: "phone", clock: .system, environment: [:])
            try phone.setParameter("a", to: .int(1))
            try phone.setParameter("big", to: .string("small"))
            try phone.setParameter("b", to: .int(2))
        }
        // What a writer before revision 2.7 could store: the same change, its value 70,000 bytes.
        let large = String(repeating: "x", count: 70_000)
        let database = try DatabaseQueue(path: directory.appendingPathComponent("replica.sqlite").path)
        try await database.write { db in
            try db.execute(
                sql: #"UPDATE change SET body = replace(body, '"small"', ?) WHERE seq = 2"#, arguments: ["\"\(large)\""]
            )
            try db.execute(sql: "UPDATE parameter SET value = ? WHERE id = 'big'", arguments: ["\"\(large)\""])
        }
        try database.close()
        let phone = try TipsReplica(directory: directory, deviceID: "phone", clock: .system, environment: [:])
        #expect(phone.parameterValue("big") == .string(large))
        let laptop = try makeDevice("laptop")
        try await fixture.app().test(.live) { server in
            let url = URL(string: "http://127.0.0.1:\(try #require(server.port))")!
            let client = SyncClient(replica: phone, configuration: .init(server: url, token: fixture.tokens["phone"]!))
            try await client.syncOnce()
            let setAside = await client.setAside
            #expect(setAside.count == 1)
            #expect(
                setAside.first?.reason.hasPrefix("changes[1]: its canonical JSON text is 70") == true,
                "\(setAside.first?.reason ?? "nothing set aside")")
            #expect(phone.parameterValue("big") == .null)
            #expect(try phone.outbox(limit: 10).isEmpty)
            try await SyncClient(replica: laptop, configuration: .init(server: url, token: fixture.tokens["laptop"]!))
                .syncOnce()
            #expect(laptop.parameterValue("a") == .int(1) && laptop.parameterValue("b") == .int(2))
            #expect(laptop.parameterValue("big") == .null)
            try await client.syncOnce()
            #expect(phone.state == laptop.state)
        }
    }

    @Test func theIndexComesFromTheFieldTheServerNamesAndNeverFromTheBatchNumbering() {
        #expect(RefusedChange.index(in: "changes[3].value: too deep") == 3)
        #expect(RefusedChange.index(in: "changes[12]: not an object") == 12)
        #expect(RefusedChange.index(in: "changes[1].seq: a push must carry consecutive sequence numbers") == nil)
        #expect(RefusedChange.index(in: "body: expected an object") == nil)
        #expect(RefusedChange.index(in: "changes[x].value") == nil)
    }
}
