package import Hummingbird
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// Feeds ``RequestHistory`` from every `/v1` request: a push, a pull, and whether it failed (4xx/5xx).
package struct RequestHistoryMiddleware: RouterMiddleware {
    let history: RequestHistory
    let now: @Sendable () -> Int64

    package init(history: RequestHistory, now: @escaping @Sendable () -> Int64) {
        self.history = history
        self.now = now
    }

    package func handle(
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
