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

        /// What the server remembered at start (``TokenIdentityWarmup``) forgotten: as for tokens
        /// issued since, each is looked up once.
        func forgetWhatWasRememberedAtStart() {
            #expect(tokens.count == fixture.tokens.count)
            tokens.forgetAll()
        }
    }

    static func push(_ device: String, _ seq: Int64) throws -> ByteBuffer {
        try body(PushRequest(changes: [change(device, seq, .parameter(id: "p", value: .int(seq)))]))
    }

    @Test func aKnownTokensPushesAndPullsAreNotLookedUpFirst() async throws {
        let server = try await Server()
        try await server.app.test(.router) { client in
            server.forgetWhatWasRememberedAtStart()
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

    /// A live stream that carries changes (a cursor) reads the account's log before it begins: that
    /// read confirms a remembered token, as a pull's does — a device's reconnect costs one trip to
    /// the store, not two. A stream without a cursor reads nothing, so its token is looked up.
    @Test func aKnownTokensLiveStreamIsNotLookedUpFirst() async throws {
        let server = try await Server()
        let notifier = ChangeNotifier()
        var dependencies = ServerDependencies(store: server.store, notifier: notifier)
        dependencies.tokens = server.tokens
        let app = buildApplication(configuration: .test, dependencies: dependencies)
        try await app.test(.router) { client in
            server.forgetWhatWasRememberedAtStart()
            let cursor = try await client.execute(
                uri: "/v1/pull", method: .get, headers: server.fixture.headers("laptop")
            ) { try decode(PullResponse.self, $0.body).cursor }
            #expect(server.store.tokenLookups == 1)
            let escaped = cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let carrying = Task {
                try await client.execute(
                    uri: "/v1/live?cursor=\(escaped)", method: .get, headers: server.fixture.headers("laptop")
                ) { $0.status }
            }
            await notifier.waitForOpenStreams(1)
            #expect(server.store.tokenLookups == 1)
            let notifying = Task {
                try await client.execute(uri: "/v1/live", method: .get, headers: server.fixture.headers("laptop")) {
                    $0.status
                }
            }
            await notifier.waitForOpenStreams(2)
            #expect(server.store.tokenLookups == 2)
            notifier.finishAll()
            #expect(try await carrying.value == .ok)
            #expect(try await notifying.value == .ok)
            // Revoked behind the server's back: the stream's first read refuses it, nothing opens.
            try await server.revokeElsewhere("laptop")
            try await client.execute(
                uri: "/v1/live?cursor=\(escaped)", method: .get, headers: server.fixture.headers("laptop")
            ) { #expect($0.status == .unauthorized) }
            #expect(server.tokens.identity(forTokenHash: server.hash("laptop")) == nil)
        }
    }

    /// A remembered token revoked since ends none of its device's streams: opening one more than a
    /// device may hold ends its oldest, and that happens only once the stream's first read has
    /// confirmed the token — an old token cannot close the streams of the device's new one.
    @Test func aRevokedRememberedTokensStreamEndsNoOtherStream() async throws {
        let server = try await Server()
        let notifier = ChangeNotifier()
        var configuration = ServerConfiguration.test
        configuration.maxLiveStreamsPerDevice = 1
        var dependencies = ServerDependencies(store: server.store, notifier: notifier)
        dependencies.tokens = server.tokens
        let app = buildApplication(configuration: configuration, dependencies: dependencies)
        try await app.test(.router) { client in
            let cursor = try await client.execute(
                uri: "/v1/pull", method: .get, headers: server.fixture.headers("laptop")
            ) { try decode(PullResponse.self, $0.body).cursor }
            let escaped = cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(server.tokens.identity(forTokenHash: server.hash("laptop"))?.device == "laptop")
            // Revoked, then a new token for the laptop, which opens its one stream.
            try await server.revokeElsewhere("laptop")
            let token = try await CredentialIssuance(server.fixture.store).createToken(
                accountName: "alice", device: "laptop")
            var fresh = HTTPFields()
            fresh[.authorization] = "Bearer \(token)"
            let stream = Task {
                try await client.execute(uri: "/v1/live?cursor=\(escaped)", method: .get, headers: fresh) { $0.status }
            }
            await notifier.waitForOpenStreams(1)
            // The old token, still remembered: refused, and the new token's stream stays open.
            try await client.execute(
                uri: "/v1/live?cursor=\(escaped)", method: .get, headers: server.fixture.headers("laptop")
            ) { #expect($0.status == .unauthorized) }
            #expect(notifier.openStreams == 1)
            notifier.finishAll()
            #expect(try await stream.value == .ok)
        }
    }

    /// A starting server remembers the newest tokens before any device asks (``TokenIdentityWarmup``):
    /// after a restart every device reconnects at once, and none of them then waits for a lookup.
    @Test func aStartingServerRemembersTheNewestTokens() async throws {
        let server = try await Server()
        let newest = try await server.store.newestTokens(limit: 10)
        #expect(Set(newest.map(\.hash)) == Set(server.fixture.tokens.values.map(TokenHasher.hash)))
        #expect(try await server.store.newestTokens(limit: 1).count == 1)
        try await TokenIdentityWarmup(store: server.store, tokens: server.tokens).warm()
        #expect(server.tokens.count == server.fixture.tokens.count)
        #expect(server.tokens.identity(forTokenHash: server.hash("phone"))?.device == "phone")
        // Bounded like any remembering: a full cache takes no more.
        let small = TokenIdentityCache(capacity: 1)
        try await TokenIdentityWarmup(store: server.store, tokens: small).warm()
        #expect(small.count == 1)
        // Served from what it remembered: the push is not looked up first.
        try await server.app.test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: server.fixture.headers("phone"),
                body: try Self.push("phone", 1)
            ) { #expect($0.status == .ok) }
        }
        #expect(server.store.tokenLookups == 0)
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
            server.forgetWhatWasRememberedAtStart()
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
