import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport
import TipSyncTestSupport

/// Device sign-in with the app's own identity provider's JWTs (HS256 secret, JWKS public keys).
@Suite struct JWTSignInTests {
    /// What an identity provider puts in a token; any field may be left out to test its absence.
    struct ProviderClaims: JWTPayload {
        var sub: SubjectClaim? = "user-42"
        var device: String? = "phone"
        var exp: ExpirationClaim? = ExpirationClaim(value: Date(timeIntervalSince1970: 2_000_000))
        var iat: IssuedAtClaim? = IssuedAtClaim(value: Date(timeIntervalSince1970: 1_000_000))
        var nbf: NotBeforeClaim?
        var iss: IssuerClaim? = "https://id.example.com"
        var aud: AudienceClaim? = "tips"
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Server time: 1,500,000 s after 1970, inside the default token's validity.
    static let now: Int64 = 1_500_000_000
    static let secret = String(repeating: "s", count: 32)

    static func temporaryFile(_ contents: String) throws -> String {
        let url = Scratch.path("tipsync-jwt")
        try Data(contents.utf8).write(to: url)
        return url.path
    }

    static func hs256(_ claims: ProviderClaims, secret: String = secret) async throws -> String {
        try await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256).sign(claims)
    }

    static func headers(_ token: String) -> HTTPFields {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(token)"
        headers[.contentType] = "application/json"
        return headers
    }

    func withServer(
        _ configuration: JWTSignIn.Configuration? = nil, now: @escaping @Sendable () -> Int64 = { JWTSignInTests.now },
        _ body: @escaping @Sendable (ServerFixture, any TestClientProtocol) async throws -> Void
    ) async throws {
        let fixture = try await ServerFixture.make()
        let jwt = try await JWTSignIn(
            configuration: configuration
                ?? .init(
                    secretFile: try Self.temporaryFile(Self.secret + "\n"), issuer: "https://id.example.com",
                    audience: "tips"))
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, jwt: jwt, now: now))
        try await app.test(.router) { client in try await body(fixture, client) }
    }

    func expectRefused(
        _ token: String, _ client: any TestClientProtocol, code: String = "unauthorized", saying words: String
    ) async throws {
        try await client.execute(uri: "/v1/pull", method: .get, headers: Self.headers(token)) { response in
            #expect(response.status == .unauthorized)
            let error = try decode(ErrorBody.self, response.body).error
            #expect(error.code == code)
            #expect(error.message.contains(words), "\(error.message)")
        }
    }

    @Test func aValidJWTCreatesTheAccountAndDeviceOnFirstUseAndSyncs() async throws {
        try await withServer { fixture, client in
            let token = try await Self.hs256(ProviderClaims())
            try await client.execute(
                uri: "/v1/push", method: .post, headers: Self.headers(token),
                body: try body(PushRequest(changes: [change("phone", 1, .datastoreReset, ms: 1_400_000_000)]))
            ) { #expect($0.status == .ok) }
            let id = try #require(try await fixture.store.accountID(named: "user-42"))
            let count = try await fixture.store.logCount(account: id)
            #expect(count == 1)
            // A second device of the same person, signed in by the same provider, sees the change.
            var laptop = ProviderClaims()
            laptop.device = "laptop"
            try await client.execute(
                uri: "/v1/pull", method: .get, headers: Self.headers(try await Self.hs256(laptop))
            ) { response in
                let page = try decode(PullResponse.self, response.body)
                #expect(page.changes.count == 1)
            }
            // The device claim must match the pushed changes, as with device tokens.
            try await client.execute(
                uri: "/v1/push", method: .post, headers: Self.headers(token),
                body: try body(PushRequest(changes: [change("laptop", 1, .datastoreReset, ms: 1_400_000_000)]))
            ) { #expect($0.status == .forbidden) }
        }
    }

    @Test func everyRefusalNamesItsReasonAndExpiryIsTokenExpired() async throws {
        try await withServer { _, client in
            var expired = ProviderClaims()
            expired.exp = ExpirationClaim(value: Date(timeIntervalSince1970: 1_499_999))
            try await expectRefused(
                try await Self.hs256(expired), client, code: "token_expired", saying: "expired")
            try await expectRefused(
                try await Self.hs256(ProviderClaims(), secret: String(repeating: "x", count: 32)), client,
                saying: "bad signature")
            var noExp = ProviderClaims()
            noExp.exp = nil
            try await expectRefused(try await Self.hs256(noExp), client, saying: "'exp'")
            var noDevice = ProviderClaims()
            noDevice.device = nil
            try await expectRefused(try await Self.hs256(noDevice), client, saying: "'device'")
            var noSubject = ProviderClaims()
            noSubject.sub = nil
            try await expectRefused(try await Self.hs256(noSubject), client, saying: "'sub'")
            var otherIssuer = ProviderClaims()
            otherIssuer.iss = "https://evil.example.com"
            try await expectRefused(try await Self.hs256(otherIssuer), client, saying: "'iss'")
            var otherAudience = ProviderClaims()
            otherAudience.aud = "other-app"
            try await expectRefused(try await Self.hs256(otherAudience), client, saying: "'aud'")
            var controlCharacter = ProviderClaims()
            controlCharacter.device = "ph\u{7}one"
            try await expectRefused(try await Self.hs256(controlCharacter), client, saying: "control characters")
            try await expectRefused("not.a.jwt", client, saying: "refused")
        }
    }

    /// A token signed with the test secret by hand, with any header (jwt-kit always writes `alg`).
    static func handSigned(header: String, claims: ProviderClaims = ProviderClaims()) throws -> String {
        func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let input = base64URL(Data(header.utf8)) + "." + base64URL(try encoder.encode(claims))
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data(input.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return input + "." + base64URL(Data(signature))
    }

    /// Second hard look: a token not yet valid, one claiming to be issued in the future (it would
    /// outlive a revocation), a header without `alg`, with a `kid` no key has, or with a `crit`
    /// extension nobody here understands — each refused, the message naming the claim.
    @Test func timeClaimsAndHeadersTheServerCannotHonourAreRefused() async throws {
        try await withServer { _, client in
            let day = 86_400.0
            var notYet = ProviderClaims()
            notYet.nbf = NotBeforeClaim(value: Date(timeIntervalSince1970: 1_500_000 + day))
            try await expectRefused(try await Self.hs256(notYet), client, saying: "'nbf'")
            var future = ProviderClaims()
            future.iat = IssuedAtClaim(value: Date(timeIntervalSince1970: 1_500_000 + day))
            try await expectRefused(try await Self.hs256(future), client, saying: "'iat'")
            // Within the clock-skew bound (300 s) both are a provider's clock a little ahead: accepted.
            var close = ProviderClaims()
            close.iat = IssuedAtClaim(value: Date(timeIntervalSince1970: 1_500_000 + 100))
            close.nbf = NotBeforeClaim(value: Date(timeIntervalSince1970: 1_500_000 + 100))
            try await client.execute(uri: "/v1/pull", method: .get, headers: Self.headers(try await Self.hs256(close)))
            {
                #expect($0.status == .ok)
            }

            try await expectRefused(try Self.handSigned(header: #"{"typ":"JWT"}"#), client, saying: "'alg'")
            try await expectRefused(
                try Self.handSigned(header: #"{"alg":"HS256","typ":"JWT","crit":["b64"],"b64":false}"#), client,
                saying: "'crit'")
            try await client.execute(
                uri: "/v1/pull", method: .get,
                headers: Self.headers(try Self.handSigned(header: #"{"alg":"HS256","typ":"JWT"}"#))
            ) { #expect($0.status == .ok) }
            for kid in ["nope", "", "K1"] {
                // Signed with the right secret: only the kid is wrong (jwt-kit then tried every key).
                let token = try Self.handSigned(header: #"{"alg":"HS256","typ":"JWT","kid":"\#(kid)"}"#)
                try await expectRefused(token, client, saying: "'kid'")
            }
        }
    }

    /// A JWT whose header `alg` disagrees with the key (even `none`) was accepted when the signature
    /// verified with the key (issue 59, item 6). RFC 8725 §3.1: the algorithm is the key's, and the
    /// header must name it.
    @Test func aHeaderWhoseAlgorithmIsNotTheKeysIsRefused() async throws {
        try await withServer { _, client in
            for alg in ["none", "HS512", "RS256", "ES256", "hs256"] {
                let token = try Self.handSigned(header: #"{"alg":"\#(alg)","typ":"JWT"}"#)
                try await expectRefused(token, client, saying: "'alg'")
            }
            try await client.execute(
                uri: "/v1/pull", method: .get,
                headers: Self.headers(try Self.handSigned(header: #"{"alg":"HS256","typ":"JWT"}"#))
            ) { #expect($0.status == .ok) }
        }
    }

    /// A token whose `iat` is ahead of the server's clock used to survive the revocation of its
    /// device and the erasure of its account; now it is refused before either is consulted.
    @Test func aFutureIssuedAtCannotOutliveARevocation() async throws {
        try await withServer { fixture, client in
            var future = ProviderClaims()
            future.iat = IssuedAtClaim(value: Date(timeIntervalSince1970: 1_500_000 + 86_400))
            let token = try await Self.hs256(future)
            _ = try await Self.hs256(ProviderClaims())
            try await client.execute(
                uri: "/v1/pull", method: .get, headers: Self.headers(try await Self.hs256(ProviderClaims()))
            ) { #expect($0.status == .ok) }
            _ = try await fixture.store.revokeTokens(accountName: "user-42", device: "phone", at: Self.now)
            try await expectRefused(token, client, saying: "'iat'")
        }
    }

    @Test func revocationAndErasureRefuseJWTsIssuedBefore() async throws {
        try await withServer { fixture, client in
            let token = try await Self.hs256(ProviderClaims())
            try await client.execute(uri: "/v1/pull", method: .get, headers: Self.headers(token)) {
                #expect($0.status == .ok)
            }
            _ = try await fixture.store.revokeTokens(accountName: "user-42", device: "phone", at: Self.now)
            try await expectRefused(token, client, saying: "revoked")
            var later = ProviderClaims()
            later.iat = IssuedAtClaim(value: Date(timeIntervalSince1970: 1_500_001))
            try await client.execute(
                uri: "/v1/pull", method: .get, headers: Self.headers(try await Self.hs256(later))
            ) { #expect($0.status == .ok) }
            _ = try await fixture.store.eraseAccount(name: "user-42", at: Self.now + 5000)
            // The one answer that ends a device's sync (protocol.md §17.3): a code of its own.
            try await expectRefused(try await Self.hs256(later), client, code: "account_erased", saying: "erased")
        }
    }

    @Test func aJWKSFileIsReadAndReloadedWhenItChanges() async throws {
        let first = ES256PrivateKey()
        let second = ES256PrivateKey()
        @Sendable func jwks(_ keys: [(String, ES256PrivateKey)]) -> String {
            let entries = keys.map { kid, key in
                let parameters = key.publicKey.parameters!
                return
                    #"{"kty":"EC","crv":"P-256","alg":"ES256","kid":"\#(kid)","x":"\#(parameters.x)","y":"\#(parameters.y)"}"#
            }
            return #"{"keys":[\#(entries.joined(separator: ","))]}"#
        }
        @Sendable func sign(_ key: ES256PrivateKey, kid: String) async throws -> String {
            try await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: kid)).sign(ProviderClaims())
        }
        let path = try Self.temporaryFile(jwks([("k1", first)]))
        let signIn = try await JWTSignIn(configuration: .init(jwksFile: path))
        let fixture = try await ServerFixture.make()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, jwt: signIn, now: { Self.now })
        )
        try await app.test(.router) { client in
            try await client.execute(
                uri: "/v1/pull", method: .get, headers: Self.headers(try await sign(first, kid: "k1"))
            ) { #expect($0.status == .ok) }
            try await expectRefused(try await sign(second, kid: "k2"), client, saying: "the JWT was refused")
            // The provider rotates its keys: the file changes, the server reloads (SIGHUP does the same).
            try Data(jwks([("k2", second)]).utf8).write(to: URL(fileURLWithPath: path))
            try await signIn.reload()
            try await client.execute(
                uri: "/v1/pull", method: .get, headers: Self.headers(try await sign(second, kid: "k2"))
            ) { #expect($0.status == .ok) }
            try await expectRefused(try await sign(first, kid: "k1"), client, saying: "the JWT was refused")
        }
        // A broken key file is refused at start with the file named, not half-used.
        let broken = try Self.temporaryFile("{\"keys\": 7}")
        await #expect(throws: StoreError.self) { try await JWTSignIn(configuration: .init(jwksFile: broken)) }
        let short = try Self.temporaryFile("short")
        await #expect(throws: StoreError.self) { try await JWTSignIn(configuration: .init(secretFile: short)) }
    }

    @Test func aLiveStreamEndsWhenItsJWTExpires() async throws {
        var claims = ProviderClaims()
        claims.exp = ExpirationClaim(value: Date(timeIntervalSince1970: Double(Self.now + 50) / 1000))
        let token = try await Self.hs256(claims)
        try await withServer { _, client in
            try await client.execute(uri: "/v1/live", method: .get, headers: Self.headers(token)) { response in
                #expect(response.status == .ok)
                // The stream ended (the response is complete) with nothing but `ready`; a heartbeat
                // comment may come first when a starved run reaches the request after an interval.
                let events = String(buffer: response.body).replacingOccurrences(of: ": heartbeat\n\n", with: "")
                #expect(events == "event: ready\ndata: {}\n\n")
            }
        }
    }
}
