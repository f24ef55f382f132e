import Foundation
import Hummingbird
import HummingbirdTesting
import NIOFoundationEssentialsCompat
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

/// `/admin/v1`, in process: what an app's backend does without a shell on the server.
@Suite struct AdminAPITests {
    struct Admin {
        let fixture: ServerFixture
        let key: String

        static func make() async throws -> Admin {
            let fixture = try await ServerFixture.make(devices: ["phone", "laptop"])
            return Admin(
                fixture: fixture,
                key: try await CredentialIssuance(fixture.store).createAdminKey(name: "backend", at: 1).key)
        }

        var headers: HTTPFields {
            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(key)"
            return headers
        }
    }

    @Test func everyAdminRouteNeedsAnAdminKeyNotADeviceToken() async throws {
        let admin = try await Admin.make()
        try await admin.fixture.app().test(.router) { client in
            try await client.execute(uri: "/admin/v1/accounts", method: .get) { response in
                #expect(response.status == .unauthorized)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "unauthorized")
            }
            try await client.execute(uri: "/admin/v1/accounts", method: .get, headers: admin.fixture.headers("phone")) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: "/v1/pull", method: .get, headers: admin.headers) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: "/admin/v1/accounts", method: .get, headers: admin.headers) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/admin/v1/accounts", method: .post, headers: admin.headers) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, HEAD")
            }
            _ = try await admin.fixture.store.revokeAdminKey(name: "backend")
            try await client.execute(uri: "/admin/v1/accounts", method: .get, headers: admin.headers) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test func accountsAreCreatedIdempotentlyListedInPagesAndNamesAreChecked() async throws {
        let admin = try await Admin.make()
        try await admin.fixture.app().test(.router) { client in
            try await client.execute(uri: "/admin/v1/accounts/bob", method: .put, headers: admin.headers) { response in
                #expect(response.status == .created)
                #expect(String(buffer: response.body) == #"{"created":true,"name":"bob"}"#)
            }
            try await client.execute(uri: "/admin/v1/accounts/bob", method: .put, headers: admin.headers) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"created":false,"name":"bob"}"#)
            }
            // Percent-encoded names are decoded: "café" (NFC).
            try await client.execute(uri: "/admin/v1/accounts/caf%C3%A9", method: .put, headers: admin.headers) {
                #expect($0.status == .created)
            }
            for bad in ["a%00b", "%FF", String(repeating: "x", count: 257)] {
                try await client.execute(uri: "/admin/v1/accounts/\(bad)", method: .put, headers: admin.headers) {
                    response in
                    #expect(response.status == .badRequest)
                    let error = try decode(ErrorBody.self, response.body).error
                    #expect(error.code == "invalid_parameter" && error.message.hasPrefix("account: "))
                }
            }
            try await client.execute(uri: "/admin/v1/accounts?limit=2", method: .get, headers: admin.headers) {
                response in
                #expect(
                    String(buffer: response.body).replacing(/"createdAt":\d+,/, with: "")
                        == #"{"accounts":[{"devices":2,"logEntries":0,"name":"alice"},{"devices":0,"logEntries":0,"name":"bob"}],"next":"bob"}"#
                )
            }
            try await client.execute(uri: "/admin/v1/accounts?limit=2&after=bob", method: .get, headers: admin.headers)
            {
                response in
                #expect(
                    String(buffer: response.body).replacing(/"createdAt":\d+,/, with: "")
                        == #"{"accounts":[{"devices":0,"logEntries":0,"name":"café"}]}"#)
            }
            try await client.execute(uri: "/admin/v1/accounts?limit=0", method: .get, headers: admin.headers) {
                #expect($0.status == .badRequest)
            }
        }
    }

    @Test func aTokenFromTheAPISyncsAndTheAccountPageShowsTheDevice() async throws {
        let admin = try await Admin.make()
        let activity = DeviceActivity()
        let app = buildApplication(
            configuration: .test,
            dependencies: ServerDependencies(store: admin.fixture.store, activity: activity, now: { 1_700_000 }))
        try await app.test(.router) { client in
            let token = try await client.execute(
                uri: "/admin/v1/accounts/alice/devices/tablet/tokens", method: .post, headers: admin.headers
            ) { response in
                #expect(response.status == .created)
                return try JSONDecoder().decode([String: String].self, from: Data(buffer: response.body))["token"]
            }
            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(try #require(token))"
            headers[.contentType] = "application/json"
            let changes = [
                change("tablet", 1, .parameter(id: "p", value: .int(1)), ms: 1_600_000),
                change("tablet", 2, .parameter(id: "p", value: .int(2)), ms: 1_600_001),
            ]
            try await client.execute(
                uri: "/v1/push", method: .post, headers: headers, body: try body(PushRequest(changes: changes))
            ) { #expect($0.status == .ok) }
            try await client.execute(uri: "/admin/v1/accounts/alice", method: .get, headers: admin.headers) {
                response in
                let details = try JSONDecoder().decode(AccountDetails.self, from: Data(buffer: response.body))
                #expect(details.logEntries == 2 && details.logEnd == 2)
                let tablet = try #require(details.devices.first { $0.name == "tablet" })
                #expect(tablet.highestSeq == 2 && tablet.tokens == 1 && tablet.lastSeen == 1_700_000 && !tablet.live)
            }
            // The whole log as JSON lines, in log order.
            try await client.execute(uri: "/admin/v1/accounts/alice/export", method: .get, headers: admin.headers) {
                response in
                #expect(response.headers[.contentType] == "application/x-ndjson")
                let lines = String(buffer: response.body).split(separator: "\n")
                let exported = try lines.map { try JSONCoding.decode(Change.self, from: $0.utf8) }
                #expect(exported == changes)
            }
            try await client.execute(uri: "/admin/v1/accounts/alice/compact", method: .post, headers: admin.headers) {
                response in
                #expect(String(buffer: response.body) == #"{"dropped":1,"logEntries":1}"#)
            }
            try await client.execute(uri: "/admin/v1/accounts/nobody/compact", method: .post, headers: admin.headers) {
                #expect($0.status == .notFound)
            }
            try await client.execute(
                uri: "/admin/v1/accounts/nobody/devices/x/tokens", method: .post, headers: admin.headers
            ) { #expect($0.status == .notFound) }
        }
    }

    @Test func revokingADeviceEndsItsLiveStreamAndItsNextRequestIs401() async throws {
        let admin = try await Admin.make()
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: admin.fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            let stream = Task {
                try await client.execute(uri: "/v1/live", method: .get, headers: admin.fixture.headers("phone")) {
                    String(buffer: $0.body)
                }
            }
            while notifier.count == 0 { await Task.yield() }
            try await client.execute(
                uri: "/admin/v1/accounts/alice/devices/phone/tokens", method: .delete, headers: admin.headers
            ) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"account":"alice","device":"phone","revoked":1}"#)
            }
            // The stream ended without the server shutting down.
            let text = try await stream.value
            #expect(text.hasPrefix("event: ready\n"))
            #expect(notifier.count == 0)
            try await client.execute(uri: "/v1/pull", method: .get, headers: admin.fixture.headers("phone")) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: "/v1/pull", method: .get, headers: admin.fixture.headers("laptop")) {
                #expect($0.status == .ok)
            }
            try await client.execute(
                uri: "/admin/v1/accounts/alice/devices/tablet/tokens", method: .delete, headers: admin.headers
            ) { #expect($0.status == .notFound) }
        }
    }

    @Test func erasingAnAccountEndsItsStreamsAndLeavesNothingBehind() async throws {
        let admin = try await Admin.make()
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: admin.fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: admin.fixture.headers("phone"),
                body: try body(PushRequest(changes: [change("phone", 1, .datastoreReset)]))
            ) { #expect($0.status == .ok) }
            let stream = Task {
                try await client.execute(uri: "/v1/live", method: .get, headers: admin.fixture.headers("laptop")) {
                    String(buffer: $0.body)
                }
            }
            while notifier.count == 0 { await Task.yield() }
            try await client.execute(uri: "/admin/v1/accounts/alice", method: .delete, headers: admin.headers) {
                response in
                #expect(String(buffer: response.body) == #"{"erased":true,"logEntries":1,"name":"alice"}"#)
            }
            _ = try await stream.value
            for device in ["phone", "laptop"] {
                try await client.execute(uri: "/v1/pull", method: .get, headers: admin.fixture.headers(device)) {
                    #expect($0.status == .unauthorized)
                }
            }
            try await client.execute(uri: "/admin/v1/accounts/alice", method: .get, headers: admin.headers) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/admin/v1/accounts/alice", method: .delete, headers: admin.headers) {
                #expect($0.status == .notFound)
            }
            let count = try await admin.fixture.store.logCount(account: admin.fixture.accountID)
            #expect(count == 0)
        }
    }
}
