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

/// Pushes and pulls take a known token's device from ``TokenIdentityCache`` and the store confirms
/// the token in the operation's own transaction. What must hold: the cache saves the lookup, and a
/// revoked token is still refused at its very next request — on every route, whatever else is
/// wrong with the request — with nothing stored.
@Suite(.timeLimit(.minutes(5))) struct TokenIdentityCacheTests {
    struct Server {
        let fixture: ServerFixture
        let store: GatedStore
        let tokens = TokenIdentityCache()

        init() async throws {
            fixture = try await ServerFixture.make()
            store = GatedStore(base: fixture.store)
            store.letPushesThrough()
        }

        var app: some ApplicationProtocol {
            var dependencies = ServerDependencies(store: store)
            dependencies.tokens = tokens
            return buildApplication(configuration: .test, dependencies: dependencies)
        }

        /// Revokes the device's tokens through a second handle on the database file, as the CLI
        /// does beside a running server: the server is not told.
        func revokeElsewhere(_ device: String) async throws {
            let cli = try SQLiteSyncStore(path: fixture.store.pool.path)
            let revoked = try await cli.revokeTokens(accountName: "alice", device: device, at: 1)
            #expect(revoked?.tokens == 1)
        }

        func hash(_ device: String) -> String { TokenHasher.hash(fixture.tokens[device]!) }
    }

    static func push(_ device: String, _ seq: Int64) throws -> ByteBuffer {
        try body(PushRequest(changes: [change(device, seq, .parameter(id: "p", value: .int(seq)))]))
    }

    @Test func aKnownTokensPushesAndPullsAreNotLookedUpFirst() async throws {
        let server = try await Server()
        try await server.app.test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: server.fixture.headers("phone"),
                body: try Self.push("phone", 1)
            ) { #expect($0.status == .ok) }
            #expect(server.store.tokenLookups == 1)
            #expect(server.tokens.identity(forTokenHash: server.hash("phone"))?.device == "phone")
            for seq in Int64(2)...5 {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: server.fixture.headers("phone"),
                    body: try Self.push("phone", seq)
                ) { #expect($0.status == .ok) }
                try await client.execute(uri: "/v1/pull", method: .get, headers: server.fixture.headers("phone")) {
                    #expect($0.status == .ok)
                }
            }
            #expect(server.store.tokenLookups == 1)
            // Other routes still ask the store every time.
            try await client.execute(uri: "/v1/devices/phone", method: .get, headers: server.fixture.headers("phone")) {
                #expect($0.status == .ok)
            }
            #expect(server.store.tokenLookups == 2)
        }
        #expect(try await server.fixture.store.logCount(account: server.fixture.accountID) == 5)
    }

    /// Revoked behind the server's back after it remembered the token: the next push and pull are
    /// `401 unauthorized` and store nothing, the token is forgotten, and so it stays.
    @Test func aRevokedTokenIsRefusedAtItsNextPushAndPull() async throws {
        let server = try await Server()
        try await server.app.test(.router) { client in
            for device in ["phone", "laptop"] {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: server.fixture.headers(device),
                    body: try Self.push(device, 1)
                ) { #expect($0.status == .ok) }
            }
            #expect(server.tokens.count == 2)
            try await server.revokeElsewhere("phone")
            try await server.revokeElsewhere("laptop")

            try await client.execute(
                uri: "/v1/push", method: .post, headers: server.fixture.headers("phone"),
                body: try Self.push("phone", 2)
            ) { response in
                #expect(response.status == .unauthorized)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "unauthorized")
            }
            #expect(server.tokens.identity(forTokenHash: server.hash("phone")) == nil)
            try await client.execute(uri: "/v1/pull", method: .get, headers: server.fixture.headers("laptop")) {
                #expect($0.status == .unauthorized)
            }
            #expect(server.tokens.count == 0)
            for device in ["phone", "laptop"] {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: server.fixture.headers(device),
                    body: try Self.push(device, 2)
                ) { #expect($0.status == .unauthorized) }
            }
        }
        #expect(try await server.fixture.store.logCount(account: server.fixture.accountID) == 2)
    }

    /// A revoked token's request that is wrong in some other way too is still answered `401`, as
    /// without the cache (authentication comes first): the error waits for the store's word.
    @Test(arguments: [
        ("/v1/push", HTTPRequest.Method.post, #"{"changes": ["#),  // malformed JSON: 400
        ("/v1/push", .post, #"{"changes": [{"device": "phone"}]}"#),  // an invalid change: 422
        ("/v1/pull?limit=0", .get, ""),  // a bad parameter: 400
        ("/v1/pull?cursor=nonsense", .get, ""),  // an unreadable cursor: 400
    ])
    func aRevokedTokensOtherErrorsAreUnauthorized(_ uri: String, _ method: HTTPRequest.Method, _ text: String)
        async throws
    {
        let server = try await Server()
        try await server.app.test(.router) { client in
            try await client.execute(uri: "/v1/pull", method: .get, headers: server.fixture.headers("phone")) {
                #expect($0.status == .ok)
            }
            // Before the revocation the request's own error is the answer.
            try await client.execute(
                uri: uri, method: method, headers: server.fixture.headers("phone"), body: ByteBuffer(string: text)
            ) { #expect($0.status.code / 100 == 4 && $0.status != .unauthorized) }
            #expect(server.tokens.count == 1)
            try await server.revokeElsewhere("phone")
            try await client.execute(
                uri: uri, method: method, headers: server.fixture.headers("phone"), body: ByteBuffer(string: text)
            ) { #expect($0.status == .unauthorized) }
            #expect(server.tokens.count == 0)
        }
    }

    /// An entry that names another device than the store does (planted: no real sequence of events
    /// makes one) is never acted on: the push names the cached device, the store refuses it.
    @Test func aStaleEntryNeverActsForAnotherDevice() async throws {
        let server = try await Server()
        server.tokens.remember(
            DeviceIdentity(accountID: server.fixture.accountID, device: "laptop"), forTokenHash: server.hash("phone"))
        try await server.app.test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: server.fixture.headers("phone"),
                body: try Self.push("laptop", 1)
            ) { #expect($0.status == .unauthorized) }
            #expect(try await server.fixture.store.logCount(account: server.fixture.accountID) == 0)
            // Forgotten, then looked up again: the phone is the phone.
            try await client.execute(
                uri: "/v1/push", method: .post, headers: server.fixture.headers("phone"),
                body: try Self.push("phone", 1)
            ) { #expect($0.status == .ok) }
            #expect(server.tokens.identity(forTokenHash: server.hash("phone"))?.device == "phone")
        }
        #expect(try await server.fixture.store.highestSeq(account: server.fixture.accountID, device: "laptop") == 0)
        #expect(try await server.fixture.store.highestSeq(account: server.fixture.accountID, device: "phone") == 1)
    }

    /// Every `/v1` route refuses a revoked token the server remembered.
    @Test(arguments: ["/v1/push", "/v1/pull", "/v1/live", "/v1/devices/phone", "/v1/catalog"])
    func everyRouteRefusesARevokedRememberedToken(_ uri: String) async throws {
        let server = try await Server()
        try await server.app.test(.router) { client in
            try await client.execute(uri: "/v1/pull", method: .get, headers: server.fixture.headers("phone")) {
                #expect($0.status == .ok)
            }
            try await server.revokeElsewhere("phone")
            let method: HTTPRequest.Method = uri == "/v1/push" ? .post : .get
            try await client.execute(
                uri: uri, method: method, headers: server.fixture.headers("phone"),
                body: method == .post ? try Self.push("phone", 1) : ByteBuffer()
            ) { #expect($0.status == .unauthorized) }
        }
    }

    @Test func theCacheIsBounded() {
        let cache = TokenIdentityCache(capacity: 3)
        for index in 0..<10 {
            cache.remember(DeviceIdentity(accountID: 1, device: "d\(index)"), forTokenHash: "h\(index)")
            #expect(cache.count <= 3)
        }
        #expect(cache.identity(forTokenHash: "h9")?.device == "d9")
        cache.forget(tokenHash: "h9")
        #expect(cache.identity(forTokenHash: "h9") == nil)
    }
}
