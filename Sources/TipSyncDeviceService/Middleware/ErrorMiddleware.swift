package import Hummingbird
import Logging
import TipSyncCore
import TipSyncServerBasics
import TipSyncStorage

/// Turns every error into the protocol's JSON error body, so clients parse one shape for all 4xx/5xx,
/// including Hummingbird's own (unknown route, body too large).
package struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The server clock (milliseconds since 1970) reported as `serverTime`: the same one push checks skew against.
    let now: @Sendable () -> Int64

    package init(now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            if !(error is SyncError || error is any HTTPResponseError) {
                context.logger.error("request failed", metadata: ["error": "\(error)"])
            }
            return SyncError(error).response(serverTime: now())
        }
    }
}
