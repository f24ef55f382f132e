import CoreMetrics
package import Hummingbird
package import TipSyncServerBasics
import TipSyncStorage

/// Refuses a device's `/v1` request with `429 rate_limited` and `Retry-After` once it has spent its
/// request bucket (``ServerConfiguration/requestRate``). Runs after authentication: the limit is the
/// device's, so one device's flood never slows another account.
package struct RateLimitMiddleware: RouterMiddleware {
    let limiter: RateLimiter<DeviceIdentity>
    let metrics: ServerMetrics
    let now: @Sendable () -> Int64
    /// ``ServerConfiguration/rateRefusalDelay``: a refusal's answer waits this long, so a client
    /// that ignores `Retry-After` cannot turn cheap refusals into a flood (issue 59: one device
    /// re-sending as fast as answers came cost the others' latency).
    let refusalDelay: Duration

    package init(
        limiter: RateLimiter<DeviceIdentity>, metrics: ServerMetrics, now: @escaping @Sendable () -> Int64,
        refusalDelay: Duration
    ) {
        self.limiter = limiter
        self.metrics = metrics
        self.now = now
        self.refusalDelay = refusalDelay
    }

    package func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        let identity = try context.requireIdentity()
        if let wait = limiter.take(identity, now: now()) {
            metrics.rateLimited.increment()
            if refusalDelay > .zero {
                // The delay is the refusal's, not work: other requests are served meanwhile.
                try await RequestAdmission.stepAside { () async throws in
                    try await Task.sleep(for: refusalDelay)
                }
            }
            throw SyncError.overBudget("sends", limiter.rate.perSecond, "requests", wait: wait)
        }
        return try await next(request, context)
    }
}
