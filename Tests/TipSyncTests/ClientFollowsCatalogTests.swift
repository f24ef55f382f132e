import Foundation
import Synchronization
import Testing
import TipSync
import TipSyncCore

/// The Swift client that follows the server's catalog (issue 33): it fetches a version a pull names,
/// applies one that validates, and never applies one that does not — it says why and keeps its own.
@Suite struct ClientFollowsCatalogTests {
    /// Pulls name `catalogTag`; `GET /v1/catalog` answers `catalogText` with it (or 304 when asked
    /// with its tag). Records every catalog request.
    final class CatalogServer: SyncTransport {
        let state = Mutex<(tag: String, text: String, catalogRequests: [SyncHTTPRequest])>(("", "", []))

        func publish(_ text: String, tag: String) { state.withLock { ($0.tag, $0.text) = (tag, text) } }
        var catalogRequests: [SyncHTTPRequest] { state.withLock { $0.catalogRequests } }

        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            if request.path.hasPrefix("/v1/devices/") {  // first contact: a device the server has not seen
                return SyncHTTPResponse(status: 404, body: Data(#"{"error":{"code":"not_found","message":"m"}}"#.utf8))
            }
            let (tag, text) = state.withLock { ($0.tag, $0.text) }
            if request.path.hasPrefix("/v1/pull") {
                let page =
                    #"{"catalog":\#(JSONValue.string(tag).canonicalText),"changes":[],"cursor":"g.0","generation":"g","highestSeq":0,"more":false,"serverTime":\#(Int64(Date().timeIntervalSince1970 * 1000)),"snapshot":false}"#
                return SyncHTTPResponse(status: 200, body: Data(page.utf8))
            }
            state.withLock { $0.catalogRequests.append(request) }
            if request.headers["If-None-Match"] == tag {
                return SyncHTTPResponse(status: 304, body: Data(), headers: ["etag": tag])
            }
            return SyncHTTPResponse(status: 200, body: Data(text.utf8), headers: ["etag": tag])
        }
    }

    @Test func appliesWhatValidatesAndRefusesWhatDoesNot() async throws {
        let replica = try TipsReplica(
            directory: temporaryDirectory("phone"), deviceID: "phone", clock: .system, environment: [:])
        try replica.load(catalog: Catalog(tips: [TipDefinition(id: "bundled", title: "Bundled")]))
        let server = CatalogServer()
        let events = Mutex<[ServerCatalogEvent]>([])
        var configuration = SyncConfiguration(server: URL(string: "http://tips.invalid")!, token: "t")
        configuration.followsServerCatalog = true
        configuration.onServerCatalog = { event in events.withLock { $0.append(event) } }
        let client = SyncClient(replica: replica, configuration: configuration, transport: server)

        // An invalid catalog (a rule reads an undeclared parameter): refused, the bundled one stays.
        server.publish(#"{"tips": [{"id": "a", "title": "A", "rules": [{"param": "nope"}]}]}"#, tag: "\"v1\"")
        try await client.pull()
        #expect(replica.catalogTips.map(\.id) == ["bundled"])
        #expect(try replica.serverCatalogTag == nil)
        let error = try #require(await client.catalogError)
        #expect(await client.lastError == .invalidCatalog(error))
        #expect(error.contains("\"v1\"") && error.contains("tips[0].rules[0]"), "\(error)")
        #expect(
            events.withLock { $0 } == [
                .refused(tag: "\"v1\"", reason: error.components(separatedBy: "is not valid: ")[1])
            ])
        // The same version is not fetched again.
        try await client.pull()
        #expect(server.catalogRequests.count == 1)

        // A valid one: applied, kept with its version, the error cleared.
        let valid = #"{"tips": [{"id": "served", "title": "Served"}]}"#
        server.publish(valid, tag: "\"v2\"")
        try await client.pull()
        #expect(replica.catalogTips.map(\.id) == ["served"])
        #expect(try replica.serverCatalogTag == "\"v2\"")
        #expect(try replica.serverCatalog?.tips.map(\.id) == ["served"])
        #expect(await client.catalogError == nil)
        // Unchanged: no request at all. The request for v2 named no applied version (none was).
        try await client.pull()
        #expect(server.catalogRequests.count == 2)
        #expect(server.catalogRequests.last?.headers["If-None-Match"] == nil)

        // A client that does not follow never asks.
        let other = CatalogServer()
        other.publish(valid, tag: "\"v2\"")
        let bystander = try TipsReplica(
            directory: temporaryDirectory("laptop"), deviceID: "laptop", clock: .system, environment: [:])
        try await SyncClient(
            replica: bystander,
            configuration: SyncConfiguration(server: URL(string: "http://tips.invalid")!, token: "t"),
            transport: other
        ).pull()
        #expect(other.catalogRequests.isEmpty && bystander.catalogTips.isEmpty)
    }
}
