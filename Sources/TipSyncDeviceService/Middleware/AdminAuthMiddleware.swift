package import Hummingbird
import Logging
import TipSyncServerBasics
package import TipSyncStorage

/// Requires `Authorization: Bearer tsa_…` naming an admin key (``SyncStore/createAdminKey(name:at:)``)
/// on every `/admin/v1` route. Device tokens and JWTs are refused here, as admin keys are on `/v1`.
package struct AdminAuthMiddleware: RouterMiddleware {
    let store: any IdentityStore
    /// Refused admin keys per address: too many, and the address waits.
    let signIns: SignInThrottle
    let now: @Sendable () -> Int64

    package init(store: any IdentityStore, signIns: SignInThrottle, now: @escaping @Sendable () -> Int64) {
        self.store = store
        self.signIns = signIns
        self.now = now
    }

    package func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let credential = BearerCredential(request) else {
            let error = SyncError.unauthorized(
                "send 'Authorization: Bearer <admin key>'; create one with 'tipsync-server admin-keys create'")
            throw signIns.refuse(request, context, kind: .admin, error, now: now())
        }
        guard let name = try await store.adminKeyName(forHash: TokenHasher.hash(credential.token)) else {
            throw signIns.refuse(
                request, context, kind: .admin, SyncError.unauthorized("unknown or revoked admin key"), now: now())
        }
        var context = context
        context.adminKey = name
        context.logger[metadataKey: "adminKey"] = "\(name)"
        return try await next(request, context)
    }
}
