import Hummingbird
import Logging
import Metrics

/// Refused sign-ins per client address — bad device tokens and JWTs on `/v1`, bad admin keys on
/// `/admin/v1`, failed console logins — so guessing credentials gets nowhere: each address may fail
/// ``ServerConfiguration/failedSignInRate`` times; past that, its sign-ins are answered
/// `429 rate_limited` with `Retry-After` before any credential is looked at (a right one too, until
/// the wait is over). Each failure is logged at `info` with the address and the reason, never the
/// credential, and counted in `tipsync_failed_sign_ins_total{kind}`.
final class SignInThrottle: Sendable {
    /// What was being signed in to.
    enum Kind: String, Sendable, CaseIterable {
        case device, admin, console
    }

    let limiter: RateLimiter<String>
    let counters: [Kind: Counter]

    init(rate: RateLimit, factory: any MetricsFactory) {
        limiter = RateLimiter(rate)
        counters = Dictionary(
            uniqueKeysWithValues: Kind.allCases.map {
                (
                    $0,
                    Counter(
                        label: "tipsync_failed_sign_ins_total", dimensions: [("kind", $0.rawValue)], factory: factory)
                )
            })
    }

    /// Throws `429 rate_limited` when `address` has failed too often to try again yet.
    func check(_ address: String?, now: Int64) throws {
        guard let wait = limiter.wait(Self.key(address), now: now) else { return }
        throw SyncError.rateLimited(
            "too many refused sign-ins from this address; try again in \(wait) s", retryAfter: wait)
    }

    /// Records a refused sign-in of the request `context` belongs to.
    func failed(_ context: SyncRequestContext, kind: Kind, reason: String, now: Int64) {
        let address = context.remoteAddress
        _ = limiter.take(Self.key(address), now: now)
        counters[kind]?.increment()
        context.logger.info(
            "sign-in refused",
            metadata: ["address": "\(Self.key(address))", "kind": "\(kind.rawValue)", "reason": "\(reason)"])
    }

    /// Forgets addresses whose failures are long past (on memory release).
    func forgetRefilled(now: Int64) {
        limiter.forgetRefilled(now: now)
    }

    static func key(_ address: String?) -> String { address ?? "unknown" }
}
