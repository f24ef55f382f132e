import Hummingbird

/// Requires `Authorization: Bearer <credential>` on `/v1`: a device token (`ts_…`, resolved by its
/// hash) or, when JWT sign-in is configured, a JWT from the app's identity provider. Records that
/// the device was seen.
struct BearerAuthMiddleware: RouterMiddleware {
    let store: any SyncStore
    let jwt: JWTSignIn?
    let activity: DeviceActivity
    /// Refused sign-ins per address (a guessed token, a forged JWT): too many, and the address waits.
    let signIns: SignInThrottle
    /// How far ahead of the server's clock a JWT's `nbf` and `iat` may be (the changes' bound).
    let maxClockSkew: Int64
    let now: @Sendable () -> Int64

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        try signIns.check(request, context, now: now())
        let identity: DeviceIdentity
        var context = context
        do {
            identity = try await authenticate(request, &context)
        } catch let error as SyncError where error.code == .unauthorized {
            signIns.failed(request, context, kind: .device, reason: error.message, now: now())
            throw error
        }
        activity.seen(identity, at: now())
        context.identity = identity
        context.logger[metadataKey: "device"] = "\(identity.accountID)/\(identity.device)"
        return try await next(request, context)
    }

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
                throw SyncError.unauthorized("the account was erased after this JWT was issued; sign in again")
            case .revoked:
                throw SyncError.unauthorized("this device was revoked after this JWT was issued; sign in again")
            }
            context.credentialExpiresAt = claims.expiresAt
        } else {
            guard let found = try await store.identity(forTokenHash: TokenHasher.hash(credential.token)) else {
                throw SyncError.unauthorized(
                    "unknown or revoked token; create one with 'tipsync-server tokens create'"
                        + " or POST /admin/v1/accounts/{account}/devices/{device}/tokens")
            }
            identity = found
        }
        return identity
    }
}
