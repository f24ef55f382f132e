import Foundation
package import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOPosix
import ServiceLifecycle
import TipSyncCore
import TipSyncNetworking
package import TipSyncServerBasics
package import TipSyncStorage

/// The `/v1` routes: push, pull (with optional long-poll), live (SSE) and device lookup.
package struct SyncController: Sendable {
    let store: any SyncStore
    let notifier: ChangeNotifier
    /// The bounds requests are held to (``SyncRouteLimits``).
    let limits: SyncRouteLimits
    let now: @Sendable () -> Int64
    let metrics: ServerMetrics
    /// Pushed changes per device (``ServerConfiguration/changeRate``).
    let changeLimiter: RateLimiter<DeviceIdentity>
    /// Decoded push-body bytes per device (``ServerConfiguration/bodyByteRate``).
    let bodyByteLimiter: RateLimiter<DeviceIdentity>
    /// Change text read from the log for each device (``ServerConfiguration/readByteRate``).
    let readByteLimiter: RateLimiter<DeviceIdentity>
    /// Where a large or compressed push body is decoded and checked, behind every other request.
    let costlyWork: CostlyWork
    /// Background compaction, told how far each push grew its account's log (`nil`: none).
    let compactor: AutoCompactor?
    /// Where each device's pulls reached (for operators: how far behind the log it is).
    let activity: DeviceActivity

    package init(
        store: any SyncStore, notifier: ChangeNotifier, limits: SyncRouteLimits,
        now: @escaping @Sendable () -> Int64, metrics: ServerMetrics, changeLimiter: RateLimiter<DeviceIdentity>,
        bodyByteLimiter: RateLimiter<DeviceIdentity>, readByteLimiter: RateLimiter<DeviceIdentity>,
        costlyWork: CostlyWork, compactor: AutoCompactor?, activity: DeviceActivity
    ) {
        self.store = store
        self.notifier = notifier
        self.limits = limits
        self.now = now
        self.metrics = metrics
        self.changeLimiter = changeLimiter
        self.bodyByteLimiter = bodyByteLimiter
        self.readByteLimiter = readByteLimiter
        self.costlyWork = costlyWork
        self.compactor = compactor
        self.activity = activity
    }

    package func addRoutes(to group: RouterGroup<SyncRequestContext>, table: RouteTable) {
        group.on("push", method: .post, recordingIn: table, prefix: "/v1", use: push)
        group.on("pull", method: .get, recordingIn: table, prefix: "/v1", use: pull)
        group.on("live", method: .get, recordingIn: table, prefix: "/v1", use: live)
        group.on("devices/:device", method: .get, recordingIn: table, prefix: "/v1", use: device)
        group.on("account", method: .get, recordingIn: table, prefix: "/v1", use: account)
    }

    /// Whether the request's route confirms a cached device token in its own store transaction
    /// (``UnconfirmedToken``): a push, a pull and a live stream with a cursor (its first read) do;
    /// every other route — a live stream without a cursor reads nothing — is served only after the
    /// store has looked the token up.
    static func confirmsTokenInStore(_ request: Request) -> Bool {
        switch (request.method, request.uri.path) {
        case (.post, pushPath), (.get, "/v1/pull"): true
        case (.get, "/v1/live"): request.uri.queryParameters["cursor"] != nil
        default: false
        }
    }

    /// The push route's path.
    static let pushPath = "/v1/push"

    @Sendable func pull(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let cursor = try Self.cursor(request.uri.queryParameters["cursor"].map(String.init))
        let limit = try Self.integer(
            request.uri.queryParameters["limit"].map(String.init), name: "limit", default: 1000)
        guard (1...limits.maxPullLimit).contains(limit) else {
            throw SyncError.invalidParameter("limit must be between 1 and \(limits.maxPullLimit)")
        }
        let wait = try Self.integer(request.uri.queryParameters["wait"].map(String.init), name: "wait", default: 0)
        guard wait >= 0, Double(wait) <= limits.maxWait.inSeconds else {
            throw SyncError.invalidParameter(
                "wait must be between 0 and \(SyncError.seconds(limits.maxWait.wholeMilliseconds)) seconds")
        }
        // A compressed answer may carry a page of the account's state as kept compressed (KeptStatePage).
        let coding = ContentCoding.negotiate(request.headers[.acceptEncoding])
        try refuseReadingInDebt(identity)
        // Each read also gives the device's highest stored seq (the answer's `highestSeq`), with the page.
        var page = try await store.pull(
            account: identity.accountID, after: cursor.position, limit: limit, device: identity.device,
            confirming: context.unconfirmedToken, keptPages: coding != nil)
        charge(read: page, to: identity)
        try Self.check(cursor, against: page)
        var waited = false
        if page.isEmpty, wait > 0 {
            waited = true
            // Long-poll: subscribe, re-check (a push may have landed in between), then wait for news.
            let news = notifier.subscribe(identity)
            page = try await store.pull(
                account: identity.accountID, after: cursor.position, limit: limit, device: identity.device,
                confirming: nil)
            charge(read: page, to: identity)
            if page.isEmpty {
                metrics.longPolls.increment()
                await Self.firstOf(news, timeout: .seconds(wait), orClose: context.connectionClosed)
                metrics.longPolls.decrement()
                page = try await store.pull(
                    account: identity.accountID, after: cursor.position, limit: limit, device: identity.device,
                    confirming: nil)
                charge(read: page, to: identity)
            }
        }
        if wait > 0, !waited, !page.isEmpty, !page.more, limits.longPollGather > .zero {
            // Changes were already waiting when the long-poll arrived: the account is busy, so gather
            // for a moment (its devices pull a few times a second, not once per change). A long-poll
            // that had to wait answers its first news at once: an idle account's dismissal is not delayed.
            await Self.firstOf(
                nil, timeout: limits.longPollGather,
                orClose: context.connectionClosed)
            page = try await store.pull(
                account: identity.accountID, after: cursor.position, limit: limit, device: identity.device,
                confirming: nil)
            charge(read: page, to: identity)
        }
        metrics.changesServed.increment(by: page.count)
        activity.pulled(identity, through: page.cursor)
        let highestSeq = page.deviceHighestSeq ?? 0
        // The uploaded catalog's version (protocol.md §16): a device that follows it fetches on a change.
        let catalog = try await notifier.catalogVersion.current(store).map { #""catalog":\#(Self.quoted($0)),"# } ?? ""
        // The page is the stored canonical JSON of each change, without re-encoding, between a head
        // and a tail: compressed from those three parts, or joined into the buffer that is sent.
        // `cursor` and `more` come first: a client reads them to request the next page before it
        // decodes this one, and need not scan the changes to find them (protocol.md section 8).
        let head = #"{"cursor":""# + Cursor.text(page) + #"","more":\#(page.more),"# + catalog + #""changes":["#
        let tail =
            #"],"generation":"\#(page.generation)","highestSeq":\#(highestSeq),"serverTime":\#(now()),"snapshot":\#(page.snapshot)}"#
        if let kept = page.kept, let coding {
            metrics.keptStatePagesServed.increment()
            return ContentCoding.json(
                parts: [.plain(ByteBuffer(string: head)), .deflated(kept.segment), .plain(ByteBuffer(string: tail))],
                coding: coding)
        }
        return ContentCoding.json(
            parts: [ByteBuffer(string: head), page.changes.joined, ByteBuffer(string: tail)], for: request)
    }

    /// Server-sent events (protocol.md §9), in one of two modes:
    ///
    /// - **with a `cursor`** (the stream carries changes): each `event: changes` holds the account's
    ///   changes after the stream's position as a page (`changes`, `cursor`, `from`, …), first what
    ///   is already there, then whatever the log gains; the device merges it and never pulls. Pages
    ///   are read and encoded once per account and news (``LivePages``), so a change costs one store
    ///   read however many devices receive it. `event: catalog` names the uploaded catalog's version.
    /// - **without** (notify-only, for clients before it): `event: changes` with `data: {}` whenever the
    ///   log grows (then pull), `event: catalog` with `data: {}`.
    ///
    /// A `: heartbeat` comment comes every `heartbeat` (``LiveHeartbeat``) so proxies keep the
    /// connection open. The stream ends when the client leaves, its credential expires or is revoked,
    /// its account is erased, or the server shuts down. What it writes is ``LiveStream``'s; on a
    /// connection whose first request it is, the connection's pipeline writes it wake-up by wake-up
    /// (``LiveConnection``, through ``LiveHandoff``) and no task waits while it idles.
    @Sendable func live(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        // Subscribed before the stream's first read: a push that lands while it reads wakes it too.
        // A remembered token (``UnconfirmedToken``) is confirmed by that read: until then its stream
        // ends none of the device's others (a revoked token must not close a new token's streams).
        let confirmed = context.unconfirmedToken == nil
        let subscription = notifier.subscribeLive(
            identity, limit: confirmed ? limits.maxLiveStreamsPerDevice : .max)
        var start: (position: Int64, limit: Int, generation: String)?
        var firstPage: PullPage?
        var catalog: String?
        if let text = request.uri.queryParameters["cursor"].map(String.init) {
            do {
                let cursor = try Self.cursor(text)
                let limit = try Self.integer(
                    request.uri.queryParameters["limit"].map(String.init), name: "limit", default: 1000)
                guard (1...limits.maxPullLimit).contains(limit) else {
                    throw SyncError.invalidParameter("limit must be between 1 and \(limits.maxPullLimit)")
                }
                try refuseReadingInDebt(identity)
                // Refused before the stream begins, like a pull's (protocol.md §8).
                let page = try await store.pull(
                    account: identity.accountID, after: cursor.position, limit: limit,
                    confirming: context.unconfirmedToken)
                charge(read: page, to: identity)
                try Self.check(cursor, against: page)
                if !confirmed {
                    notifier.endOldestLiveStreams(of: identity, keeping: limits.maxLiveStreamsPerDevice)
                }
                start = (cursor.position, limit, page.generation)
                firstPage = page
                catalog = try await notifier.catalogVersion.current(store)
            } catch {
                subscription.finish()
                throw error
            }
        }
        // The client left (ConnectionGuard closes the connection on its FIN): end at once.
        context.connectionClosed?.whenComplete { _ in subscription.finish() }
        // A JWT's stream ends when the JWT expires: the client reconnects with a fresh one.
        // (A timer on a shared event loop, not the connection's: that one may be a test's embedded loop.)
        // Not cancelled when the stream ends first: NIO's cancel scans every task scheduled on the
        // loop, and a server's thousands of JWT streams ending at once (a restart) made that
        // quadratic. The timer holds the subscription weakly and finds nothing to end.
        if let expiresAt = context.credentialExpiresAt {
            let lifetime = TimeAmount.milliseconds(max(0, expiresAt - now()))
            NIOSingletons.posixEventLoopGroup.any().scheduleTask(in: lifetime) { [weak subscription] in
                subscription?.finish()
            }
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        let mode: LiveStream.Mode =
            start.map { start in
                .carrying(
                    LiveFeed(
                        account: identity.accountID, device: identity, limit: start.limit, store: store,
                        notifier: notifier, activity: activity, metrics: metrics, readBudget: readByteLimiter,
                        now: now),
                    generation: start.generation, opened: firstPage, catalog: catalog)
            } ?? .notifyOnly
        let stream = LiveStream(
            subscription: subscription, mode: mode, position: start?.position ?? 0, metrics: metrics,
            stall: StallBound(
                timeout: limits.liveStallTimeout, closeConnection: context.closeConnection),
            now: now)
        let handoff = LiveHandoff.current
        handoff?.take(stream)
        return Response(status: .ok, headers: headers, body: stream.body(handedOff: handoff != nil))
    }

    @Sendable func device(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let name = try NameRules.pathSegment(context, "device")
        // Another account's devices are invisible: the same 404 as a device that does not exist.
        guard let highest = try await store.highestSeq(account: identity.accountID, device: name) else {
            throw SyncError.notFound("no device '\(name)' in this account")
        }
        return Self.json(
            text: #"{"device":\#(Self.quoted(name)),"highestSeq":\#(highest),"serverTime":\#(now())}"#)
    }

    /// Whom the credential names (protocol.md §5): the account's name, which rollout buckets hash
    /// (§13.8), and the device's.
    @Sendable func account(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        guard let name = try await store.accountName(id: identity.accountID) else {
            throw SyncError.notFound("this credential's account no longer exists")
        }
        return Self.json(
            text: #"{"account":\#(Self.quoted(name)),"device":\#(Self.quoted(identity.device)),"serverTime":\#(now())}"#
        )
    }

    // MARK: Helpers

    /// `429 rate_limited` for a device whose reads of the log are in debt
    /// (``ServerConfiguration/readByteRate``), before anything is read for its pull or stream.
    func refuseReadingInDebt(_ identity: DeviceIdentity) throws {
        guard let wait = readByteLimiter.wait(identity, now: now()) else { return }
        metrics.rateLimited.increment()
        throw SyncError.overBudget("reads", readByteLimiter.rate.perSecond, "bytes of changes", wait: wait)
    }

    /// Spends what reading `page` from the log cost from the device's read budget (its work is done:
    /// the page is answered whatever the budget holds; the debt refuses the next read).
    func charge(read page: PullPage, to identity: DeviceIdentity) {
        _ = readByteLimiter.spend(identity, cost: Double(page.readBytes), now: now())
    }

    /// A pull's cursor: `GENERATION.POSITION` as minted by ``Cursor/text(_:)``, the position counted
    /// within the caller's account. No cursor means the start (position 0). A bare position (a cursor
    /// from a server before generations existed, when positions were server-wide) is refused: it
    /// cannot be mapped onto per-account positions.
    struct Cursor {
        /// `nil`: no cursor.
        var generation: String?
        var position: Int64

        static func text(_ page: PullPage) -> String { "\(page.generation).\(page.cursor)" }
    }

    static func cursor(_ text: String?) throws -> Cursor {
        guard let text else { return Cursor(generation: nil, position: 0) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let position = Int64(parts[1]), position >= 0 else {
            throw SyncError.invalidCursor(
                "'\(text)' is not a cursor this server minted; pull without a cursor to start over")
        }
        return Cursor(generation: String(parts[0]), position: position)
    }

    /// Refuses a readable cursor that this database's log cannot have minted: one from before the
    /// cursors were rotated, or one beyond the end of the log. Both mean the log was rewound (a backup
    /// restored) and a device that kept pulling after that cursor would skip changes for good.
    static func check(_ cursor: Cursor, against page: PullPage) throws {
        if let generation = cursor.generation, generation != page.generation {
            throw SyncError.invalidCursor(
                "this cursor was minted before the server's log was restored or its cursors were rotated; "
                    + "pull without a cursor to start over")
        }
        guard cursor.position <= page.logEnd else {
            throw SyncError.invalidCursor(
                "this cursor points beyond the end of the server's log (was its database restored from a backup?); "
                    + "pull without a cursor to start over")
        }
    }

    /// Push bodies are JSON: `Content-Type: application/json` (parameters such as `charset=utf-8` allowed).
    static func requireJSON(_ request: Request) throws {
        try requireJSON(request.headers)
    }

    static func requireJSON(_ headers: HTTPFields) throws {
        let contentType = headers[.contentType]
        if contentType == "application/json" { return }  // as clients send it: nothing to take apart
        let mediaType = contentType?.split(separator: ";").first?.trimmingHTTPWhitespace.lowercased()
        guard mediaType == "application/json" else { throw SyncError.unsupportedMediaType(contentType) }
    }

    package static func integer(_ text: String?, name: String, default value: Int) throws -> Int {
        guard let text else { return value }
        guard let parsed = Int(text) else {
            throw SyncError.invalidParameter("\(name) must be an integer, got '\(text)'")
        }
        return parsed
    }

    static func describe(_ error: DecodingError) -> SyncError {
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return .malformedJSON("the body is not valid JSON: \(context.debugDescription)")
        case .dataCorrupted(let context):
            return .invalidChange("\(path(context.codingPath)): \(context.debugDescription)")
        case .keyNotFound(let key, let context):
            return .invalidChange("\(path(context.codingPath + [key])): missing")
        // The decoder's descriptions speak JSON ("expected a string, found a number"), never Swift types.
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return .invalidChange("\(path(context.codingPath)): \(context.debugDescription)")
        @unknown default:
            return .malformedJSON("the body is not a valid push request")
        }
    }

    static func path(_ keys: [any CodingKey]) -> String { DecodingError.fieldPath(keys) }

    static func quoted(_ text: String) -> String {
        String(decoding: (try? JSONCoding.encoder.encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }

    package static func json(_ value: some Encodable) throws -> Response {
        json(text: String(decoding: try JSONCoding.encoder.encode(value), as: UTF8.self))
    }

    package static func json(text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// Waits for the first element of `stream` (if any), the timeout, the connection's close or the server's
    /// graceful shutdown (which then answers at once instead of holding the shutdown up), whichever
    /// comes first. The request gives its place up meanwhile (``RequestAdmission/stepAside(_:)``):
    /// waiting for news is not the server's work.
    static func firstOf(
        _ stream: AsyncStream<Void>?, timeout: Duration, orClose connectionClosed: EventLoopFuture<Void>?
    ) async {
        await RequestAdmission.stepAside {
            await waitForFirstOf(stream, timeout: timeout, orClose: connectionClosed)
        }
    }

    private static func waitForFirstOf(
        _ stream: AsyncStream<Void>?, timeout: Duration, orClose connectionClosed: EventLoopFuture<Void>?
    ) async {
        await withTaskGroup(of: Void.self) { group in
            if let connectionClosed {
                // The client left (ConnectionGuard closes the connection on its FIN): stop waiting now.
                group.addTask { await connectionClosed.completionOrCancellation() }
            }
            if let stream {
                group.addTask {
                    var iterator = stream.makeAsyncIterator()
                    _ = await iterator.next()
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { try? await gracefulShutdown() }
            await group.next()
            group.cancelAll()
        }
    }
}
