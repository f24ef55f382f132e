package import Hummingbird
import Logging
package import Metrics
import TipSyncNetworking
package import TipSyncServerBasics
import TipSyncStorage

/// Refused sign-ins per client address — bad device tokens and JWTs on `/v1`, bad admin keys on
/// `/admin/v1`, failed console logins — so guessing credentials gets nowhere: each address may fail
/// ``ServerConfiguration/failedSignInRate`` times; past that, its *failed* sign-ins are answered
/// `429 rate_limited` with `Retry-After` instead of `401`. A right credential is never refused for
/// what others sent from its address: behind a NAT, a carrier or an office proxy, one guesser must
/// not lock everyone out. Each failure is logged at `info` with the address and the reason, never
/// the credential, and counted in `tipsync_failed_sign_ins_total{kind}`.
package final class SignInThrottle: Sendable {
    /// What was being signed in to.
    package enum Kind: String, Sendable, CaseIterable {
        case device, admin, console
    }

    let limiter: RateLimiter<String>
    let counters: [Kind: Counter]
    /// ``ServerConfiguration/trustedProxies``.
    let trustedProxies: Set<String>

    package init(rate: RateLimit, trustedProxies: Set<String> = [], factory: any MetricsFactory) {
        limiter = RateLimiter(rate)
        self.trustedProxies = trustedProxies
        counters = Dictionary(
            uniqueKeysWithValues: Kind.allCases.map {
                (
                    $0,
                    Counter(
                        label: "tipsync_failed_sign_ins_total", dimensions: [("kind", $0.rawValue)], factory: factory)
                )
            })
    }

    /// Records a refused sign-in of `request` and returns what to answer it: `refusal` (a `401`), or
    /// `429 rate_limited` with the wait once its address has failed too often.
    package func refuse(
        _ request: Request, _ context: SyncRequestContext, kind: Kind, _ refusal: SyncError, now: Int64
    ) -> SyncError {
        let client = client(headers: request.headers, peer: context.remoteAddress)
        let wait = limiter.take(client, now: now)
        counters[kind]?.increment()
        guard let wait else {
            // Logged while within the allowance; past it, counted only (a flood of guesses is not a
            // flood of log lines).
            context.logger.info(
                "sign-in refused",
                metadata: ["address": "\(client)", "kind": "\(kind.rawValue)", "reason": "\(refusal.message)"])
            return refusal
        }
        return SyncError.rateLimited(
            "too many refused sign-ins from this address; try again in \(wait) s", retryAfter: wait)
    }

    /// Forgets addresses whose failures are long past (on memory release).
    package func forgetRefilled(now: Int64) {
        limiter.forgetRefilled(now: now)
    }

    /// The client's address: the connection's peer, or — when the peer is a trusted proxy
    /// (``ServerConfiguration/trustedProxies``: one of its addresses, or with `private` any peer on
    /// loopback or a private network — 10/8, 172.16/12, 192.168/16, fc00::/7 — as `deploy/`'s Caddy
    /// is) — the right-most address of `X-Forwarded-For` that is not itself a trusted proxy, as
    /// nginx's `real_ip_recursive` does: behind two trusted proxies the last entry is the inner
    /// proxy's view of the outer one, and taking it put every client in the outer proxy's bucket
    /// (issue 74, item 4). Anyone else's header is ignored: a client cannot pick its bucket (to evade
    /// the throttle, or to lock out an address it names).
    package func client(headers: HTTPFields, peer: String?) -> String {
        let peer = peer ?? "unknown"
        guard isTrusted(peer), let forwarded = headers[.init("X-Forwarded-For")!] else { return peer }
        let entries = forwarded.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0.trimmingHTTPWhitespace.prefix(64))
        }
        var client = peer
        for entry in entries.reversed() {
            guard !entry.isEmpty else { break }
            client = entry
            guard isTrusted(entry) else { break }
        }
        return client
    }

    /// Whether `address` is a proxy the operator trusts.
    func isTrusted(_ address: String) -> Bool {
        trustedProxies.contains(address) || (trustedProxies.contains("private") && Self.isPrivate(address))
    }

    package static func isPrivate(_ address: String) -> Bool {
        let lower = address.lowercased()
        if lower == "::1" || lower.hasPrefix("fc") || lower.hasPrefix("fd") { return true }
        let text = lower.hasPrefix("::ffff:") ? String(lower.dropFirst(7)) : lower
        let octets = text.split(separator: ".").compactMap { Int($0) }
        guard octets.count == 4 else { return false }
        switch (octets[0], octets[1]) {
        case (127, _), (10, _), (192, 168): return true
        case (172, 16...31): return true
        default: return false
        }
    }
}
