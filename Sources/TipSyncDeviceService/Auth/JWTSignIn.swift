import Foundation
import JWTKit
import Logging
import ServiceLifecycle
import Synchronization
import TipSyncCore
import TipSyncServerBasics
import TipSyncStorage
import UnixSignals

/// Device sign-in with JWTs from the app's own identity provider (protocol.md section 6): HS256 with
/// a shared secret and/or the provider's public keys as a JWKS (RS256, ES256, EdDSA…), verified by
/// vapor/jwt-kit. The account is the `sub` claim, the device the `device` claim; `exp` is required,
/// `iss` and `aud` are checked when configured.
package final class JWTSignIn: Sendable {
    /// Where the keys come from, and what the tokens must say. Read by `tipsync-server serve` from
    /// `--jwt-secret-file` / `TIPSYNC_JWT_SECRET_FILE`, `--jwt-jwks-file` / `TIPSYNC_JWT_JWKS_FILE`,
    /// `--jwt-issuer` / `TIPSYNC_JWT_ISSUER` and `--jwt-audience` / `TIPSYNC_JWT_AUDIENCE`.
    package struct Configuration: Sendable, Hashable {
        /// A file holding the HS256 secret (its bytes; one trailing newline is ignored).
        package var secretFile: String?
        /// A file holding a JWKS (`{"keys": [...]}`): re-read on SIGHUP and when it changes.
        package var jwksFile: String?
        /// The `iss` every token must carry, if set.
        package var issuer: String?
        /// A value the token's `aud` must contain, if set.
        package var audience: String?

        package init(secretFile: String? = nil, jwksFile: String? = nil, issuer: String? = nil, audience: String? = nil)
        {
            self.secretFile = secretFile
            self.jwksFile = jwksFile
            self.issuer = issuer
            self.audience = audience
        }

        /// Whether any key source is configured (else JWTs are refused and only device tokens work).
        package var isEnabled: Bool { secretFile != nil || jwksFile != nil }
    }

    /// What a verified token says.
    package struct Claims: Sendable, Hashable {
        package var account: String
        package var device: String
        /// Milliseconds since 1970.
        package var expiresAt: Int64
        package var issuedAt: Int64?
    }

    package let configuration: Configuration
    /// The keys, the key ids the JWKS names, and the JWKS file's modification date.
    private let keys: Mutex<Keys>

    struct Keys {
        var collection: JWTKeyCollection
        var kids: Set<String>
        var modified: Date?
        /// The `alg` values a token may name, by key id (`""`: keys without one, the HS256 secret):
        /// a key's algorithm, never the header's choice (RFC 8725 §3.1).
        var algorithms: [String: Set<String>] = [:]
    }

    /// Reads the key files; throws with a message naming the file when one cannot be used.
    package init(configuration: Configuration) async throws {
        self.configuration = configuration
        keys = Mutex(try await Self.load(configuration))
    }

    static func load(_ configuration: Configuration) async throws -> Keys {
        let collection = JWTKeyCollection()
        var kids: Set<String> = []
        var algorithms: [String: Set<String>] = [:]
        if let path = configuration.secretFile {
            guard var secret = FileManager.default.contents(atPath: path) else {
                throw StoreError("cannot read the JWT secret file '\(path)'")
            }
            if secret.last == UInt8(ascii: "\n") { secret.removeLast() }
            guard secret.count >= 32 else {
                throw StoreError("the JWT secret in '\(path)' is \(secret.count) bytes; HS256 needs at least 32")
            }
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            algorithms["", default: []].insert("HS256")
        }
        var modified: Date?
        if let path = configuration.jwksFile {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw StoreError("cannot read the JWKS file '\(path)'")
            }
            modified = Self.modificationDate(path)
            do {
                try await collection.add(jwksJSON: String(decoding: data, as: UTF8.self))
                let set = try JSONDecoder().decode(KeyIDs.self, from: data)
                kids = Set(set.keys.compactMap(\.kid))
                for key in set.keys { algorithms[key.kid ?? "", default: []].formUnion(key.algorithms) }
            } catch {
                throw StoreError("the JWKS file '\(path)' is not a usable key set: \(error)")
            }
        }
        return Keys(collection: collection, kids: kids, modified: modified, algorithms: algorithms)
    }

    /// The `kid` of each key in a JWKS, and what its algorithm can be.
    struct KeyIDs: Decodable {
        struct Key: Decodable {
            var kid: String?
            var alg: String?
            var kty: String?
            var crv: String?

            /// The key's `alg` when the JWKS names it; else what its type allows (RFC 7518).
            var algorithms: Set<String> {
                if let alg { return [alg] }
                switch (kty, crv) {
                case ("RSA", _): return ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"]
                case ("EC", "P-256"): return ["ES256"]
                case ("EC", "P-384"): return ["ES384"]
                case ("EC", "P-521"): return ["ES512"]
                case ("OKP", _): return ["EdDSA"]
                case ("oct", _): return ["HS256", "HS384", "HS512"]
                default: return []
                }
            }
        }
        var keys: [Key]
    }

    static func modificationDate(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// Re-reads the key files. A file that cannot be used leaves the previous keys in place.
    package func reload() async throws {
        let loaded = try await Self.load(configuration)
        keys.withLock { $0 = loaded }
    }

    /// Reloads when the JWKS file's modification time changed since it was last read; `true` if it did.
    func reloadIfChanged() async throws -> Bool {
        guard let path = configuration.jwksFile else { return false }
        let known = keys.withLock { $0.modified }
        guard Self.modificationDate(path) != known else { return false }
        try await reload()
        return true
    }

    /// Whether a bearer credential looks like a JWT (three base64url parts), not a device token.
    static func looksLikeJWT(_ token: String) -> Bool {
        token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 && !token.hasPrefix("ts")
    }

    /// Verifies the token's header, signature and claims at `now` (milliseconds). `nbf` and `iat`
    /// may be ahead of `now` by at most `maxClockSkew` milliseconds (the bound changes get too): a
    /// token "issued" further in the future would outlive the revocation of its device.
    /// Throws ``SyncError`` `token_expired` after `exp`, `unauthorized` naming the reason otherwise.
    func verify(_ token: String, now: Int64, maxClockSkew: Int64 = 300_000) async throws -> Claims {
        let (collection, kids, algorithms) = keys.withLock { ($0.collection, $0.kids, $0.algorithms) }
        if let problem = Self.headerProblem(token, knownKeyIDs: kids, algorithms: algorithms) {
            throw SyncError.unauthorized("the JWT was refused: \(problem)")
        }
        let payload: Payload
        do {
            payload = try await collection.verify(token, as: Payload.self)
        } catch let error as JWTError {
            throw SyncError.unauthorized("the JWT was refused: \(Self.reason(error))")
        } catch {
            throw SyncError.unauthorized("the JWT was refused: it is not a well-formed token")
        }
        guard let exp = payload.exp else { throw SyncError.unauthorized("the JWT has no 'exp' claim; it is required") }
        let expiresAt = Self.milliseconds(exp.value)
        guard now < expiresAt else {
            throw SyncError.tokenExpired(
                "the JWT expired at \(exp.value.formatted(.iso8601)); get a fresh one and retry")
        }
        let latest = now.addingReportingOverflow(maxClockSkew).partialValue
        if let nbf = payload.nbf, Self.milliseconds(nbf.value) > latest {
            throw SyncError.unauthorized(
                "the JWT is not valid before \(nbf.value.formatted(.iso8601)) ('nbf'), more than \(maxClockSkew / 1000) s "
                    + "after the server's clock")
        }
        if let iat = payload.iat, Self.milliseconds(iat.value) > latest {
            throw SyncError.unauthorized(
                "the JWT's 'iat' (\(iat.value.formatted(.iso8601))) is more than \(maxClockSkew / 1000) s ahead of the "
                    + "server's clock; check the identity provider's clock")
        }
        if let issuer = configuration.issuer, payload.iss?.value != issuer {
            throw SyncError.unauthorized(
                "the JWT's 'iss' is \(payload.iss.map { "'\($0.value)'" } ?? "missing"); this server accepts '\(issuer)'"
            )
        }
        if let audience = configuration.audience, payload.aud?.value.contains(audience) != true {
            throw SyncError.unauthorized("the JWT's 'aud' does not include '\(audience)'")
        }
        guard let subject = payload.sub?.value else {
            throw SyncError.unauthorized("the JWT has no 'sub' claim; it names the account")
        }
        guard let device = payload.device else {
            throw SyncError.unauthorized("the JWT has no 'device' claim; it names the device")
        }
        if let violation = NameRules.violation(subject) {
            throw SyncError.unauthorized("the JWT's 'sub' cannot name an account: it \(violation)")
        }
        if let violation = NameRules.violation(device) {
            throw SyncError.unauthorized("the JWT's 'device' cannot name a device: it \(violation)")
        }
        return Claims(
            account: subject, device: device, expiresAt: expiresAt,
            issuedAt: payload.iat.map { Self.milliseconds($0.value) })
    }

    /// What in the token's JOSE header this server cannot honour (jwt-kit accepts each of these): no
    /// `alg`; a `crit` list (RFC 7515 §4.1.11: a recipient that does not understand a listed
    /// extension must refuse — none is understood here); a `kid` that names no key of the JWKS
    /// (jwt-kit would try the other keys; tokens signed with the `--jwt-secret-file` secret carry none);
    /// an `alg` that is not the algorithm of the key it names (RFC 8725 §3.1: jwt-kit verifies with
    /// the key's algorithm whatever the header says, `none` included).
    static func headerProblem(_ token: String, knownKeyIDs: Set<String>, algorithms: [String: Set<String>] = [:])
        -> String?
    {
        guard let first = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let data = Self.base64URLDecoded(first),
            let header = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return "malformed token (its header is not base64url JSON)" }
        guard header["alg"] is String else { return "the header has no 'alg'" }
        if header["crit"] != nil { return "the header lists 'crit' extensions, which this server does not support" }
        if let kid = header["kid"] {
            guard let name = kid as? String, knownKeyIDs.contains(name) else {
                let known =
                    knownKeyIDs.isEmpty ? "no key has one" : "known: " + knownKeyIDs.sorted().joined(separator: ", ")
                return "unknown key id 'kid' \(kid) (\(known))"
            }
        }
        if let alg = header["alg"] as? String, !algorithms.isEmpty {
            let allowed = algorithms[header["kid"] as? String ?? ""] ?? algorithms.values.reduce([], { $0.union($1) })
            if !allowed.contains(alg) {
                return
                    "the header's 'alg' \(alg) is not the key's algorithm (\(allowed.sorted().joined(separator: ", ")))"
            }
        }
        return nil
    }

    static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    /// A claim's time in milliseconds, saturating (a client-supplied number never traps).
    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite else { return 0 }
        if value >= 9.2e18 { return .max }
        if value <= -9.2e18 { return .min }
        return Int64(value)
    }

    static func reason(_ error: JWTError) -> String {
        switch error.errorType {
        case .signatureVerificationFailed: "bad signature"
        case .malformedToken: "malformed token"
        case .unknownKID: "unknown key id ('kid')"
        case .missingKIDHeader: "no key id ('kid') and no default key"
        case .unsupportedAlgorithm: "unsupported algorithm"
        case .claimVerificationFailure: error.reason ?? "a claim failed verification"
        default: error.reason ?? "\(error.errorType)"
        }
    }

    /// The claims TipSync reads; checked by ``verify(_:now:)`` with the server's injected clock.
    struct Payload: JWTPayload {
        var sub: SubjectClaim?
        var device: String?
        var exp: ExpirationClaim?
        var iat: IssuedAtClaim?
        var nbf: NotBeforeClaim?
        var iss: IssuerClaim?
        var aud: AudienceClaim?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
