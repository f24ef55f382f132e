import Hummingbird
import Synchronization

/// Feeds ``RequestHistory`` from every `/v1` request: a push, a pull, and whether it failed (4xx/5xx).
struct RequestHistoryMiddleware: RouterMiddleware {
    let history: RequestHistory
    let now: @Sendable () -> Int64

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        let kind: RequestHistory.Kind =
            path == "/v1/push" ? .push : path == "/v1/pull" ? .pull : .other
        guard path.hasPrefix("/v1/") else { return try await next(request, context) }
        do {
            let response = try await next(request, context)
            history.record(kind, failed: response.status.code >= 400, at: now())
            return response
        } catch {
            history.record(kind, failed: true, at: now())
            throw error
        }
    }
}
