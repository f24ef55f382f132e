package import Hummingbird
import TipSyncCore
import TipSyncServerBasics
package import TipSyncStorage

/// Requires `Authorization: Bearer <credential>` on `/v1`: a device token (`ts_…`, resolved by its
/// hash) or, when JWT sign-in is configured, a JWT from the app's identity provider. Records that
/// the device was seen.
///
/// A push, a pull or a live stream with a cursor, with a device token the server has seen, takes
/// its identity from ``TokenIdentityCache`` and leaves the store's confirmation to the operation
/// that serves it (``UnconfirmedToken``). Any answer other than success is sent only once the store
/// has confirmed the token, so a revoked token gets `401` whatever else is wrong with its request,
/// as without the cache.
///
/// The device is not added to the request logger's metadata: a device name can be a person's (the
/// request log writes `<device>` for it), no route below logs, and swift-log's `StreamLogHandler`
/// renders its metadata again on every set — about 2% of a single-change push's CPU.
package struct BearerAuthMiddleware: RouterMiddleware {
    let store: any IdentityStore
    let tokens: TokenIdentityCache
    let jwt: JWTSignIn?
    let activity: DeviceActivity
    /// Refused sign-ins per address (a guessed token, a forged JWT): too many, and the address waits.
    let signIns: SignInThrottle
    /// How far ahead of the server's clock a JWT's `nbf` and `iat` may be (the changes' bound).
    let maxClockSkew: Int64
    let now: @Sendable () -> Int64
    /// Says when many device tokens are unknown here (a server on the wrong database).
    var unknownTokens: UnknownTokenWatch?

    package init(
        store: any IdentityStore, tokens: TokenIdentityCache, jwt: JWTSignIn?, activity: DeviceActivity,
        signIns: SignInThrottle, maxClockSkew: Int64, now: @escaping @Sendable () -> Int64,
        unknownTokens: UnknownTokenWatch?
    ) {
        self.store = store
        self.tokens = tokens
        self.jwt = jwt
        self.activity = activity
        self.signIns = signIns
        self.maxClockSkew = maxClockSkew
        self.now = now
        self.unknownTokens = unknownTokens
    }

    package func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        if let cached = cachedIdentity(request) {
            return try await serve(request, context, cached, next: next)
        }
        let identity: DeviceIdentity
        var context = context
        do {
            identity = try await authenticate(request, &context)
        } catch let error as SyncError where error.code == .unauthorized {
            throw signIns.refuse(request, context, kind: .device, error, now: now())
        }
        saw(identity, request)
        context.identity = identity
        return try await next(request, context)
    }

    /// Records that the device made a request now, and what it reports of itself
    /// (``TipSyncCore/DeviceContext/headerName``; a malformed report is ignored).
    private func saw(_ identity: DeviceIdentity, _ request: Request) {
        activity.seen(identity, at: now())
        if let text = request.headers.first(where: { $0.name.canonicalName == Self.contextHeader })?.value,
            let reported = DeviceContext(headerValue: text)
        {
            activity.reported(identity, reported)
        }
    }

    static let contextHeader = DeviceContext.headerName.lowercased()

    /// The cache's identity for the request's device token, on a route that confirms it in the store.
    private func cachedIdentity(_ request: Request) -> UnconfirmedToken? {
        guard SyncController.confirmsTokenInStore(request),
            let credential = BearerCredential(request.headers),
            jwt == nil || !JWTSignIn.looksLikeJWT(credential.token)
        else { return nil }
        let hash = TokenHasher.hash(credential.token)
        return tokens.identity(forTokenHash: hash).map { UnconfirmedToken(hash: hash, identity: $0) }
    }

    /// Serves a request whose identity came from the cache: success means the store confirmed the
    /// token; any other answer waits for the store to confirm it first.
    private func serve(
        _ request: Request, _ context: SyncRequestContext, _ token: UnconfirmedToken,
        next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.identity = token.identity
        context.unconfirmedToken = token
        do {
            let response = try await next(request, context)
            saw(token.identity, request)
            return response
        } catch is UnconfirmedToken.Gone {
            throw try await refuse(request, context, token)
        } catch {
            guard try await store.identity(forTokenHash: token.hash) == token.identity else {
                throw try await refuse(request, context, token)
            }
            saw(token.identity, request)
            throw error
        }
    }

    /// A cached token the store no longer knows: forgotten, and `401` as for any unknown token.
    private func refuse(_ request: Request, _ context: SyncRequestContext, _ token: UnconfirmedToken) async throws
        -> SyncError
    {
        tokens.forget(tokenHash: token.hash)
        return try await refuseUnknown(request, context, tokenHash: token.hash)
    }

    /// A device token the store does not hold: `401 account_erased` when its account was erased
    /// (the device stops syncing), else `401 unauthorized` as for any unknown token.
    private func refuseUnknown(_ request: Request, _ context: SyncRequestContext, tokenHash: String) async throws
        -> SyncError
    {
        if try await store.wasErased(tokenHash: tokenHash) { return Self.erasedAccount }
        unknownTokens?.note(now: now())
        return signIns.refuse(request, context, kind: .device, Self.unknownToken, now: now())
    }

    static let erasedAccount = SyncError.accountErased(
        "the account of this token was erased; this device's data must not sync again")

    static let unknownToken = SyncError.unauthorized(
        "unknown or revoked token; create one with 'tipsync-server tokens create'"
            + " or POST /admin/v1/accounts/{account}/devices/{device}/tokens")

    /// The device the request's credential names; `401` naming why there is none.
    func authenticate(_ request: Request, _ context: inout SyncRequestContext) async throws -> DeviceIdentity {
        guard let credential = BearerCredential(request) else {
            throw SyncError.unauthorized(
                request.headers[.authorization] == nil
                    ? "send 'Authorization: Bearer <device token or JWT>'"
                    : "the Authorization header must be 'Bearer <device token or JWT>'")
        }
        let identity: DeviceIdentity
        if let jwt, JWTSignIn.looksLikeJWT(credential.token) {
            let time = now()
            let claims = try await jwt.verify(credential.token, now: time, maxClockSkew: maxClockSkew)
            switch try await store.signIn(
                accountName: claims.account, device: claims.device, issuedAt: claims.issuedAt, at: time)
            {
            case .identity(let signedIn): identity = signedIn
            case .erased:
                // Not a guess (the JWT verified), and it can never change: the device stops syncing
                // instead of uploading what its account's owner erased.
                throw SyncError.accountErased(
                    "the account was erased after this JWT was issued; this device's data must not sync again")
            case .revoked:
                throw SyncError.unauthorized("this device was revoked after this JWT was issued; sign in again")
            }
            context.credentialExpiresAt = claims.expiresAt
        } else {
            let hash = TokenHasher.hash(credential.token)
            guard let found = try await store.identity(forTokenHash: hash) else {
                if try await store.wasErased(tokenHash: hash) { throw Self.erasedAccount }
                unknownTokens?.note(now: now())
                throw Self.unknownToken
            }
            tokens.remember(found, forTokenHash: hash)
            identity = found
        }
        return identity
    }
}
