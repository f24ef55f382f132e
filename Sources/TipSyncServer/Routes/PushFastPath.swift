import Dispatch
import Foundation
import Hummingbird
import Logging
import NIOCore
import TipSyncCore

/// Single pushes answered on their connection's event loop, without a Swift task: the common push
/// — a device token the server has seen, no browser origin, a body that passes — costs the server
/// about a third less CPU than through Hummingbird's connection task and the router (docs/benchmark-history.md,
/// eleventh to thirteenth rounds); ``ServerDependencies/pushFastPath`` turns it off.
/// ``PushFastPathHandler`` sits in each HTTP/1.1 connection's pipeline in front of Hummingbird
/// and takes such a push; every other request, and any push this path would not answer
/// with `200`, goes to the router as it came, which answers it as it answers every request.
///
/// Nothing here is a rule of its own: the push's steps are ``SyncController``'s (the changes, their
/// cost, what follows a stored push, the answer), authentication is ``BearerAuthMiddleware``'s token cache, the limits are the
/// router's limiters asked first without spending (a push they would refuse goes to the router,
/// which refuses it), and what the middlewares record of an answered request (request metrics,
/// the console's request history, device activity, memory release's activity) is recorded through
/// the same objects.
struct PushFastPath: Sendable {
    let controller: SyncController
    let auth: BearerAuthMiddleware
    /// The router's per-device request limiter (``RateLimitMiddleware``).
    let requestLimiter: RateLimiter<DeviceIdentity>
    let requestMetrics: RequestMetricsCache
    let history: RequestHistory
    let memory: MemoryRelease?
    let store: any PushesWithoutTask
    let serverName: String
    /// The request log (``RequestLogMiddleware``) writes at `debug`: while it is on, pushes go to the
    /// router, so that each is logged (with the access log on, `--log-access`, there is no fast path).
    let logger: Logger

    /// The largest body this path reads, parses and checks on the event loop (16 KiB: a few dozen
    /// changes; a device's usual push is one, a few hundred bytes). The loop serves every connection
    /// of its thread, so what it does per request must stay small whatever a client sends: a larger
    /// body, and any compressed one (4 KiB of gzip inflates to 4 MiB), is read, inflated and parsed in
    /// the router's task instead, where it delays no other connection (issue 59, item 1).
    static let largestBody = 16 * 1024

    /// A request this path may take, known by its head: the token whose cached identity it carries.
    /// Anything with a browser's `Origin` (CORS), an `Expect` header, a `Connection` header other
    /// than `keep-alive` (Hummingbird closes after `close`), a `Content-Encoding`, a declared length
    /// above ``largestBody``, or a credential the cache does not hold goes to the router.
    func takes(_ head: HTTPRequest) -> UnconfirmedToken? {
        guard head.method == .post, head.path == SyncController.pushPath, logger.logLevel > .debug,
            head.headerFields[.origin] == nil, head.headerFields[.expect] == nil,
            head.headerFields[.contentEncoding].map({ $0.lowercased() == "identity" }) ?? true,
            head.headerFields[.contentLength].map({ Int($0).map { $0 <= Self.largestBody } ?? false }) ?? true,
            head.headerFields[.connection].map({ $0.lowercased() == "keep-alive" }) ?? true
        else { return nil }
        return auth.cachedIdentity(method: head.method, path: SyncController.pushPath, headers: head.headerFields)
    }

    /// A push ready for the store: its changes, charged to the device.
    struct Accepted: Sendable {
        let changes: [Change]
        let serverTime: Int64
        /// When the request started, for its duration metric.
        let start: UInt64
        /// The body's size: what it spent of the device's body budget.
        let bodyBytes: Int
    }

    /// The push's changes when every check before the store passes, spending the device's request
    /// and change budgets and its body's bytes; `nil` (nothing spent) when the router must answer it instead.
    func accept(_ head: HTTPRequest, body: ByteBuffer, token: UnconfirmedToken, peer: String?) -> Accepted? {
        let start = DispatchTime.now().uptimeNanoseconds
        let serverTime = controller.now()
        let identity = token.identity
        guard body.readableBytes <= min(Self.largestBody, controller.configuration.maxBodyBytes),
            (try? SyncController.requireJSON(head.headerFields)) != nil
        else { return nil }
        let changes: [Change]
        do {
            changes = try controller.pushedChanges(
                body, contentEncoding: head.headerFields[.contentEncoding], identity: identity, serverTime: serverTime)
        } catch {
            // The router decodes it again and pays for it then: what was spent here is given back
            // (a refusal for the budget itself spent nothing).
            if (error as? SyncError)?.code != .rateLimited {
                controller.refundBody(body.readableBytes, to: identity, now: serverTime)
            }
            return nil
        }
        guard requestLimiter.wouldAllow(identity, now: serverTime),
            controller.canCharge(changes.count, to: identity, now: serverTime),
            requestLimiter.take(identity, now: serverTime) == nil,
            (try? controller.charge(changes.count, to: identity, now: serverTime)) != nil
        else {
            controller.refundBody(body.readableBytes, to: identity, now: serverTime)
            return nil
        }
        memory?.noteActivity()
        requestMetrics.activeRequests(.post).increment()
        return Accepted(changes: changes, serverTime: serverTime, start: start, bodyBytes: body.readableBytes)
    }

    /// Stores an accepted push and announces it as soon as it has committed (on the writer's thread:
    /// the live streams' news leaves at once, as the router's would, without waiting for a hop to
    /// the connection's loop); `stored` then gets the outcome (hand it to ``answer(_:_:token:)`` on
    /// the loop).
    func store(
        _ accepted: Accepted, token: UnconfirmedToken,
        stored: @escaping @Sendable (Result<PushOutcome, any Error>) -> Void
    ) {
        let identity = token.identity
        store.push(accepted.changes, from: identity, confirming: token) { [controller] result in
            if case .success(let outcome) = result {
                controller.announce(
                    outcome, identity: identity, serverTime: accepted.serverTime, generation: outcome.generation)
            }
            stored(result)
        }
    }

    /// What the router records of an answered push — the request metrics, the console's history,
    /// the device's activity — and the answer's JSON text; `nil` when the store failed (nothing of
    /// the push is stored then, and the router must answer it).
    func answer(_ result: Result<PushOutcome, any Error>, _ accepted: Accepted, token: UnconfirmedToken) -> String? {
        requestMetrics.activeRequests(.post).decrement()
        guard case .success(let outcome) = result else {
            // The router answers it, and charges it: what this path spent is given back, so a refused
            // push costs the device's budgets once, as on the router alone.
            let now = controller.now()
            requestLimiter.refund(token.identity, now: now)
            controller.refund(accepted.changes.count, to: token.identity, now: now)
            controller.refundBody(accepted.bodyBytes, to: token.identity, now: now)
            return nil
        }
        controller.metrics.pushesOnEventLoop.increment()
        let now = controller.now()
        controller.activity.seen(token.identity, at: now)
        history.record(.push, failed: false, at: now)
        requestMetrics.endpoint(.init(route: SyncController.pushPath, method: .post, status: .ok))
            .record(since: accepted.start)
        return controller.pushAnswer(outcome, serverTime: accepted.serverTime, generation: outcome.generation)
    }

    /// The answer's head: what the router's answer to a push carries.
    func head(contentLength: Int) -> HTTPResponse {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(contentLength)
        fields[.date] = HTTPDate.cached(Date())
        fields[.server] = serverName
        SecurityHeadersMiddleware<SyncRequestContext>.addEveryAnswersHeaders(to: &fields)
        return HTTPResponse(status: .ok, headerFields: fields)
    }
}
