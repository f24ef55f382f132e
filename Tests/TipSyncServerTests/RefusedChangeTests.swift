import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncServer

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

    @Test func theIndexComesFromTheFieldTheServerNamesAndNeverFromTheBatchNumbering() {
        #expect(RefusedChange.index(in: "changes[3].value: too deep") == 3)
        #expect(RefusedChange.index(in: "changes[12]: not an object") == 12)
        #expect(RefusedChange.index(in: "changes[1].seq: a push must carry consecutive sequence numbers") == nil)
        #expect(RefusedChange.index(in: "body: expected an object") == nil)
        #expect(RefusedChange.index(in: "changes[x].value") == nil)
    }
}
