import Hummingbird

/// Requires `Authorization: Bearer <token>` and resolves it, by its hash, to a device.
struct BearerAuthMiddleware: RouterMiddleware {
    let store: any SyncStore

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw SyncError.unauthorized("send 'Authorization: Bearer <device token>'")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw SyncError.unauthorized("the Authorization header must be 'Bearer <device token>'")
        }
        guard let identity = try await store.identity(forTokenHash: TokenHasher.hash(String(parts[1]))) else {
            throw SyncError.unauthorized("unknown or revoked token; create one with 'tipsync-server tokens create'")
        }
        var context = context
        context.identity = identity
        context.logger[metadataKey: "device"] = "\(identity.accountID)/\(identity.device)"
        return try await next(request, context)
    }
}
