import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// `GET /v1/catalog` (issue 33, delivery): the server held a catalog (`PUT /admin/v1/catalog`) and no
/// device ever received it. Devices now fetch it, revalidating with `ETag` / `If-None-Match`.
@Suite struct CatalogDeliveryTests {
    static let catalog =
        #"{"tips": [{"id": "welcome", "title": "Welcome", "rules": [{"param": "ready"}]}], "parameters": [{"id": "ready", "default": false}]}"#

    @Test func devicesFetchTheUploadedCatalogAndRevalidateIt() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        let key = try await CredentialIssuance(fixture.store).createAdminKey(name: "ops", at: 1).key
        let admin: HTTPFields = [.authorization: "Bearer \(key)"]
        try await fixture.app().test(.router) { client in
            // None uploaded yet: 404 in the protocol's shape.
            try await client.execute(uri: "/v1/catalog", method: .get, headers: fixture.headers("phone")) { response in
                #expect(response.status == .notFound)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "not_found")
            }
            // A device credential is required, like every /v1 route.
            try await client.execute(uri: "/v1/catalog", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(
                uri: "/admin/v1/catalog", method: .put, headers: admin, body: ByteBuffer(string: Self.catalog)
            ) { #expect($0.status == .ok) }
            let tag = try await client.execute(uri: "/v1/catalog", method: .get, headers: fixture.headers("phone")) {
                response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == Self.catalog)
                #expect(response.headers[.contentType] == "application/json")
                #expect(response.headers[.cacheControl] == "no-cache")
                return try #require(response.headers[.eTag])
            }
            #expect(tag == CatalogVersion.entityTag(of: Self.catalog) && tag.hasPrefix("\"") && tag.count == 34)
            for header in [tag, "W/\(tag)", "\"other\", \(tag)", "*"] {
                var headers = fixture.headers("phone")
                headers[.ifNoneMatch] = header
                try await client.execute(uri: "/v1/catalog", method: .get, headers: headers) { response in
                    #expect(response.status == .notModified, "\(header)")
                    #expect(response.body.readableBytes == 0 && response.headers[.eTag] == tag)
                }
            }
            var stale = fixture.headers("phone")
            stale[.ifNoneMatch] = "\"0123\""
            try await client.execute(uri: "/v1/catalog", method: .get, headers: stale) { #expect($0.status == .ok) }
            // A new upload is a new version: the old tag no longer matches.
            let changed = Self.catalog.replacingOccurrences(of: "Welcome", with: "Hello")
            try await client.execute(
                uri: "/admin/v1/catalog", method: .put, headers: admin, body: ByteBuffer(string: changed)
            ) { #expect($0.status == .ok) }
            var old = fixture.headers("phone")
            old[.ifNoneMatch] = tag
            try await client.execute(uri: "/v1/catalog", method: .get, headers: old) { response in
                #expect(response.status == .ok && String(buffer: response.body) == changed)
                #expect(response.headers[.eTag] == CatalogVersion.entityTag(of: changed))
            }
        }
    }

    /// A large catalog is compressed like a pull page when the device accepts it.
    @Test func aLargeCatalogIsSentCompressed() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        let tips = (0..<100).map { #"{"id": "tip-\#($0)", "title": "Tip number \#($0)"}"# }.joined(separator: ",")
        try await CatalogComposition(fixture.store).putCatalogJSON(#"{"tips": [\#(tips)]}"#)
        try await fixture.app().test(.router) { client in
            var headers = fixture.headers("phone")
            headers[.acceptEncoding] = "gzip"
            try await client.execute(uri: "/v1/catalog", method: .get, headers: headers) { response in
                #expect(response.status == .ok && response.headers[.contentEncoding] == "gzip")
                #expect(response.headers[.vary] == "Accept-Encoding" && response.headers[.eTag] != nil)
            }
        }
    }
}

/// A new catalog reaches running devices at once (issue 33): every pull answer names the catalog's
/// version, a waiting long-poll answers when one is uploaded, and live streams write `event: catalog`.
@Suite struct CatalogAnnouncementTests {
    static func upload(_ client: some TestClientProtocol, key: String, _ text: String) async throws {
        let admin: HTTPFields = [.authorization: "Bearer \(key)"]
        try await client.execute(uri: "/admin/v1/catalog", method: .put, headers: admin, body: ByteBuffer(string: text))
        {
            #expect($0.status == .ok)
        }
    }

    @Test func pullAnswersNameTheCatalogVersion() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        let key = try await CredentialIssuance(fixture.store).createAdminKey(name: "ops", at: 1).key
        try await fixture.app().test(.router) { client in
            func catalogTag() async throws -> String? {
                try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) {
                    try decode(PullResponse.self, $0.body).catalog
                }
            }
            #expect(try await catalogTag() == nil)
            try await Self.upload(client, key: key, CatalogDeliveryTests.catalog)
            #expect(try await catalogTag() == CatalogVersion.entityTag(of: CatalogDeliveryTests.catalog))
            try await Self.upload(client, key: key, #"{"tips": []}"#)
            #expect(try await catalogTag() == CatalogVersion.entityTag(of: #"{"tips": []}"#))
        }
    }

    @Test func aWaitingLongPollAnswersWhenACatalogIsUploaded() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        let key = try await CredentialIssuance(fixture.store).createAdminKey(name: "ops", at: 1).key
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            let poll = Task {
                try await client.execute(uri: "/v1/pull?wait=60", method: .get, headers: fixture.headers("phone")) {
                    try decode(PullResponse.self, $0.body)
                }
            }
            while notifier.count == 0 { await Task.yield() }
            try await Self.upload(client, key: key, CatalogDeliveryTests.catalog)
            let page = try await poll.value
            #expect(page.changes.isEmpty)
            #expect(page.catalog == CatalogVersion.entityTag(of: CatalogDeliveryTests.catalog))
        }
    }

    @Test func liveStreamsAnnounceANewCatalog() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        let key = try await CredentialIssuance(fixture.store).createAdminKey(name: "ops", at: 1).key
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            let stream = Task {
                try await client.execute(uri: "/v1/live", method: .get, headers: fixture.headers("phone")) {
                    String(buffer: $0.body)
                }
            }
            while notifier.count == 0 { await Task.yield() }
            try await Self.upload(client, key: key, CatalogDeliveryTests.catalog)
            notifier.finishAll()
            let text = try await stream.value
            #expect(text.contains("event: catalog\ndata: {}\n\n"))
            #expect(!text.contains("event: changes"))
        }
    }

    /// Another instance's upload arrives as a store event (PostgreSQL `NOTIFY`): the payload round-trips.
    @Test func theCatalogEventCrossesInstances() {
        #expect(StoreEvent(payload: StoreEvent.catalog.payload) == .catalog)
    }
}

/// Every uploaded catalog is kept: who uploaded it, when, what changed; an earlier one can be made
/// current again (issue 33, versions and rollback).
@Suite struct CatalogVersionTests {
    static let v1 =
        #"{"parameters": [{"id": "ready", "default": false}], "tips": [{"id": "welcome", "title": "Welcome", "rules": [{"param": "ready"}]}, {"id": "old", "title": "Old"}]}"#
    static let v2 =
        #"{"parameters": [{"id": "ready", "default": false}], "tips": [{"id": "welcome", "title": "Hello", "rules": []}, {"id": "new", "title": "New"}], "displayFrequency": "daily"}"#

    @Test(arguments: Backend.allCases)
    func theStoreKeepsEveryVersionNewestFirst(_ backend: Backend) async throws {
        try await backend.withStore { store in
            #expect(try await store.catalogVersions().isEmpty)
            #expect(
                try await CatalogComposition(store).putCatalogJSON(
                    Self.v1, uploadedBy: "ops", at: 10, restoredFrom: nil) == 1)
            #expect(
                try await CatalogComposition(store).putCatalogJSON(
                    Self.v2, uploadedBy: "cli", at: 20, restoredFrom: nil) == 2)
            #expect(
                try await CatalogComposition(store).putCatalogJSON(Self.v1, uploadedBy: "ops", at: 30, restoredFrom: 1)
                    == 3)
            let versions = try await store.catalogVersions()
            #expect(versions.map(\.version) == [3, 2, 1])
            #expect(versions.map(\.uploadedBy) == ["ops", "cli", "ops"] && versions.map(\.uploadedAt) == [30, 20, 10])
            #expect(versions.map(\.restoredFrom) == [1, nil, nil] && versions[0].text == Self.v1)
            #expect(try await store.catalogJSON() == Self.v1)
        }
    }

    @Test func diffsNameTipsAndFields() throws {
        let diff = CatalogDiff(
            from: try Catalog(validating: Array(Self.v1.utf8)), to: try Catalog(validating: Array(Self.v2.utf8)))
        #expect(diff.tipsAdded == ["new"] && diff.tipsRemoved == ["old"])
        #expect(diff.tipsChanged == [.init(tip: "welcome", fields: ["title", "rules"])])
        #expect(diff.otherChanges == ["displayFrequency"])
        #expect(diff.summary == "added new; removed old; changed welcome (title, rules); displayFrequency")
        #expect(
            CatalogDiff(from: nil, to: try Catalog(validating: Array(Self.v1.utf8))).tipsAdded == ["welcome", "old"])
    }

    @Test func theAdminAPIListsVersionsAndRestoresOne() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        let key = try await CredentialIssuance(fixture.store).createAdminKey(name: "ops", at: 1).key
        let admin: HTTPFields = [.authorization: "Bearer \(key)"]
        try await fixture.app().test(.router) { client in
            // A catalog that does not validate: refused whole, the message starting with the field in
            // protocol terms (it began with "catalog: ").
            try await client.execute(
                uri: "/admin/v1/catalog", method: .put, headers: admin,
                body: ByteBuffer(string: #"{"tips": [{"id": "a", "title": "A", "rules": [{"~": [1, 2]}]}]}"#)
            ) { response in
                #expect(response.status == .badRequest)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(
                    error.code == "invalid_parameter" && error.message.hasPrefix("tips[0].rules[0]"), "\(error.message)"
                )
            }
            for (text, version) in [(Self.v1, 1), (Self.v2, 2)] {
                try await client.execute(
                    uri: "/admin/v1/catalog", method: .put, headers: admin, body: ByteBuffer(string: text)
                ) { #expect(String(buffer: $0.body) == #"{"tips":2,"version":\#(version)}"#) }
            }
            try await client.execute(uri: "/admin/v1/catalog/versions", method: .get, headers: admin) { response in
                let list = try JSONValue(parsing: String(buffer: response.body))
                guard case .array(let versions)? = list["versions"] else { throw TestFailure("no versions") }
                #expect(versions.count == 2)
                #expect(versions[0]["version"] == .int(2) && versions[0]["current"] == .bool(true))
                #expect(versions[0]["uploadedBy"] == .string("ops"))
                #expect(
                    versions[0]["summary"]
                        == .string("added new; removed old; changed welcome (title, rules); displayFrequency"))
                #expect(versions[1]["summary"] == .string("added welcome, old; parameters"))
                #expect(versions[1]["current"] == .bool(false))
            }
            try await client.execute(uri: "/admin/v1/catalog/versions/1", method: .get, headers: admin) {
                #expect(String(buffer: $0.body) == Self.v1)
            }
            try await client.execute(uri: "/admin/v1/catalog/versions/1/restore", method: .post, headers: admin) {
                #expect(String(buffer: $0.body) == #"{"restoredFrom":1,"tips":2,"version":3}"#)
            }
            // Devices get the restored one.
            try await client.execute(uri: "/v1/catalog", method: .get, headers: fixture.headers("phone")) {
                #expect(String(buffer: $0.body) == Self.v1)
            }
            try await client.execute(uri: "/admin/v1/catalog/versions/9", method: .get, headers: admin) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/admin/v1/catalog/versions/x/restore", method: .post, headers: admin) {
                #expect($0.status == .badRequest)
            }
        }
    }
}
