import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

/// The Swift client gzips its push bodies (protocol.md section 5), and falls back to plain JSON for a
/// server that refuses them.
@Suite struct ClientPushCompressionTests {
    /// Forwards to another transport, recording each request as sent.
    final class RecordingTransport: SyncTransport {
        let next: any SyncTransport
        let sent = Mutex<[SyncHTTPRequest]>([])
        init(_ next: any SyncTransport) { self.next = next }
        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            sent.withLock { $0.append(request) }
            return try await next.send(request)
        }
    }

    @Test func aLargePushGoesGzippedAndTheServerStoresEveryChange() async throws {
        let fixture = try await ServerFixture.make()
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        try phone.donate(event: "opened", infos: (0..<300).map { .object(["screen": .int($0)]) })
        try await fixture.app().test(.live) { server in
            let server = URL(string: "http://127.0.0.1:\(try #require(server.port))")!
            let transport = RecordingTransport(URLSessionTransport(baseURL: server))
            let client = SyncClient(
                replica: phone, configuration: SyncConfiguration(server: server, token: fixture.tokens["phone"]!),
                transport: transport)
            try await client.push()
            let pushes = transport.sent.withLock { $0 }.filter { $0.path == "/v1/push" }
            #expect(!pushes.isEmpty)
            for push in pushes {
                #expect(push.headers["Content-Encoding"] == "gzip")
                #expect(push.headers["Content-Type"] == "application/json")
                // The gzip magic number, and far fewer bytes than the JSON (300 donations ≈ 40 KB).
                #expect(push.body?.prefix(2) == Data([0x1f, 0x8b]))
                #expect((push.body?.count ?? .max) < 10_000)
            }
            #expect(try phone.outbox(limit: 1000).isEmpty)

            var configuration = SyncConfiguration(server: server, token: fixture.tokens["laptop"]!)
            configuration.compressPushes = false
            try await SyncClient(replica: laptop, configuration: configuration).pull()
            #expect(laptop.state == phone.state)
            #expect(laptop.state.events["opened"]?.donations.count == 300)
        }
    }

    /// Answers pushes from a script; pulls get an empty page.
    final class ScriptedPushes: SyncTransport {
        let answers: Mutex<[Int]>
        let sent = Mutex<[SyncHTTPRequest]>([])
        init(_ answers: [Int]) { self.answers = Mutex(answers) }
        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            if request.path.hasPrefix("/v1/devices/") {  // first contact: a device the server has not seen
                return SyncHTTPResponse(status: 404, body: Data(#"{"error":{"code":"not_found","message":"m"}}"#.utf8))
            }
            sent.withLock { $0.append(request) }
            let status = answers.withLock { $0.isEmpty ? 500 : $0.removeFirst() }
            if status == 415 || status == 400 {
                let code = status == 415 ? "unsupported_media_type" : "malformed_json"
                return SyncHTTPResponse(
                    status: status, body: Data(#"{"error":{"code":"\#(code)","message":"m"},"serverTime":1}"#.utf8))
            }
            let changes = try JSONCoding.decode(PushRequest.self, from: Array(Self.plain(request)))
            return SyncHTTPResponse(
                status: 200,
                body: Data(
                    #"{"accepted":\#(changes.changes.count),"duplicates":0,"highestSeq":\#(changes.changes.last!.seq),"serverTime":\#(Int64(Date().timeIntervalSince1970 * 1000)),"generation":"g"}"#
                        .utf8))
        }

        /// The body as JSON: these tests only script plain answers to plain bodies.
        static func plain(_ request: SyncHTTPRequest) throws -> Data {
            guard request.headers["Content-Encoding"] == nil else { throw CancellationError() }
            return request.body ?? Data()
        }
    }

    /// `415`: a server that predates compression; `400 malformed_json`: a transport in between that
    /// dropped `Content-Encoding`, so the server read gzip as JSON.
    @Test(arguments: [415, 400])
    func aServerThatRefusesGzipGetsThisAndLaterPushesPlain(_ refusal: Int) async throws {
        let phone = try makeDevice("phone")
        var configuration = SyncConfiguration(server: URL(string: "http://127.0.0.1:1")!, token: "ts_x")
        configuration.pushBatchSize = 100
        try phone.donate(event: "opened", infos: (0..<150).map { .object(["screen": .int($0)]) })
        let transport = ScriptedPushes([refusal, 200, 200])
        let client = SyncClient(replica: phone, configuration: configuration, transport: transport)
        try await client.push()
        let sent = transport.sent.withLock { $0 }
        #expect(sent.map { $0.headers["Content-Encoding"] } == ["gzip", nil, nil])
        #expect(try phone.outbox(limit: 1000).isEmpty)
    }

    @Test func smallPushesAndADisabledOptionGoPlain() async throws {
        let phone = try makeDevice("phone")
        try phone.donate(event: "opened")
        let transport = ScriptedPushes([200, 200])
        let configuration = SyncConfiguration(server: URL(string: "http://127.0.0.1:1")!, token: "ts_x")
        try await SyncClient(replica: phone, configuration: configuration, transport: transport).push()
        #expect(transport.sent.withLock { $0.map { $0.headers["Content-Encoding"] } } == [nil])

        try phone.donate(event: "opened", infos: (0..<200).map { .object(["screen": .int($0)]) })
        var plain = configuration
        plain.compressPushes = false
        try await SyncClient(replica: phone, configuration: plain, transport: transport).push()
        #expect(transport.sent.withLock { $0.map { $0.headers["Content-Encoding"] } } == [nil, nil])
    }
}
