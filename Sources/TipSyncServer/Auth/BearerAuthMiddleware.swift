import Hummingbird

/// Requires `Authorization: Bearer <token>` and resolves it, by its hash, to a device; records that
/// the device was seen.
struct BearerAuthMiddleware: RouterMiddleware {
    let store: any SyncStore
    let activity: DeviceActivity
    let now: @Sendable () -> Int64

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let credential = BearerCredential(request) else {
            throw SyncError.unauthorized(
                request.headers[.authorization] == nil
                    ? "send 'Authorization: Bearer <device token>'"
                    : "the Authorization header must be 'Bearer <device token>'")
        }
        guard let identity = try await store.identity(forTokenHash: TokenHasher.hash(credential.token)) else {
            throw SyncError.unauthorized("unknown or revoked token; create one with 'tipsync-server tokens create'")
        }
        activity.seen(identity, at: now())
        var context = context
        context.identity = identity
        context.logger[metadataKey: "device"] = "\(identity.accountID)/\(identity.device)"
        return try await next(request, context)
    }
}
