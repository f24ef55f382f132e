import Foundation
import TipSyncCore

/// Syncs one replica with a TipSync server (`protocol.md`): pushes the outbox, pulls after the
/// server-minted cursor, merges what arrives, and — while ``run()`` is active — keeps a live stream
/// (or, where the transport cannot stream, a long-poll) open so changes from other devices arrive
/// within milliseconds. Outbox, cursor and clock
/// correction live in the replica, so a restart resumes where it stopped.
public actor SyncClient {
    /// The replica this client syncs, through its sync face.
    package let replica: any SyncedReplica
    public let configuration: SyncConfiguration
    let transport: any SyncTransport
    let sleep: @Sendable (Duration) async throws -> Void
    let jitter: @Sendable () -> Double
    let physicalNow: @Sendable () -> Date

    /// The latest failure, cleared by the next successful round.
    public private(set) var lastError: SyncClientError?
    /// Connected or not, first sync done, changes waiting, the last error (``statusUpdates()``).
    public var status: SyncStatus {
        var status = publishedStatus
        status.isHeldForFirstSync = replica.isHeldForFirstSync  // ends by itself as time passes
        return status
    }
    /// ``status`` as last published.
    var publishedStatus = SyncStatus()
    var statusSubscribers: [UInt64: AsyncStream<SyncStatus>.Continuation] = [:]
    var nextStatusSubscriber: UInt64 = 0
    /// Why the latest server catalog was not applied (``SyncConfiguration/followsServerCatalog``),
    /// until a catalog is applied.
    public private(set) var catalogError: String?
    /// The server catalog version refused last: not fetched again until the server names another.
    var refusedCatalogTag: String?
    /// The credential in use: the configuration's token, or the provider's latest answer.
    var token: String?
    /// Whether push bodies go gzipped: ``SyncConfiguration/compressPushes`` until a server answers
    /// one `415` (a server that does not inflate them) or `400 malformed_json` (a transport in
    /// between that dropped `Content-Encoding`).
    var compressesPushes: Bool
    /// The changes set aside this launch because the server refused them (protocol.md §17.2), oldest
    /// first; ``SyncConfiguration/onRefusedChange`` is told of each as it happens.
    public internal(set) var setAside: [RefusedChange] = []
    /// The changes a push may hold after the server answered `413` to a larger one (halved each
    /// time); `nil`: ``SyncConfiguration/pushBatchSize``.
    var pushLimit: Int?
    /// Whether ``run()``'s push loop is parked waiting for the next local change, having found the
    /// outbox empty after it subscribed (simulations read it to know a device is quiet).
    public private(set) var isAwaitingLocalChanges = false
    /// What ``run()``'s backoff reads, and whether this attempt is live yet.
    var failuresInARow = FailuresInARow()

    /// Syncs `replica`, the app's replica.
    ///
    /// - Parameters:
    ///   - transport: how requests reach the server (default: the configuration's ``SyncConfiguration/transport``,
    ///     else ``defaultTransport(_:)``).
    ///   - sleep: how backoff and `Retry-After` waits pass (tests and simulations inject their own).
    ///   - jitter: a number in `0...1` that picks each backoff delay within its range (``Backoff``;
    ///     default: uniformly random).
    public init(
        replica: TipsReplica, configuration: SyncConfiguration, transport: (any SyncTransport)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.init(syncing: replica, configuration: configuration, transport: transport, sleep: sleep, jitter: jitter)
    }

    /// Syncs any replica that keeps ``SyncedReplica``'s promises (the package's tests and simulations).
    package init(
        replica: some SyncedReplica, configuration: SyncConfiguration, transport: (any SyncTransport)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.init(syncing: replica, configuration: configuration, transport: transport, sleep: sleep, jitter: jitter)
    }

    private init(
        syncing replica: any SyncedReplica, configuration: SyncConfiguration, transport: (any SyncTransport)?,
        sleep: @escaping @Sendable (Duration) async throws -> Void, jitter: @escaping @Sendable () -> Double
    ) {
        self.replica = replica
        self.configuration = configuration
        self.transport = transport ?? configuration.transport ?? Self.defaultTransport(configuration.server)
        self.compressesPushes = configuration.compressPushes
        self.sleep = sleep
        self.jitter = jitter
        // The offset is measured against the replica's own (uncorrected) clock.
        self.physicalNow = replica.clock.now
        // A device that has never synced holds its tips back from now on (protocol.md §17.1).
        do {
            try replica.holdForFirstSync(seconds: configuration.firstSyncTimeout)
        } catch {
            lastError = .transport("cannot write the replica's sync bookkeeping: \(error)")
        }
        publishedStatus.hasSynced = replica.hasSynced
        publishedStatus.isHeldForFirstSync = replica.isHeldForFirstSync
    }

    /// The transport used when none is given: async-http-client on Linux with the package's
    /// `NIOHTTPClient` trait (an idle live stream costs nothing), else `URLSession`.
    public static func defaultTransport(_ server: URL) -> any SyncTransport {
        #if NIOHTTPClient && canImport(AsyncHTTPClient)
            HTTPClientTransport(baseURL: server)
        #else
            URLSessionTransport(baseURL: server)
        #endif
    }

    /// One full round: push everything unsent, then pull until the server has nothing more. A push
    /// the server refuses does not keep the pull from happening: other devices' changes (a tip
    /// dismissed elsewhere) arrive whatever this device's outbox holds; the push's refusal is thrown
    /// after the pull.
    public func syncOnce() async throws {
        do {
            try await continueDeviceLogOnFirstContact()
            try await learnAccount()
            var refusedPush: SyncClientError?
            do {
                try await pushAll()
            } catch let error as SyncClientError where error.isRefusal && !error.endsSync {
                refusedPush = error
            }
            try await pullAll()
            if let refusedPush { throw refusedPush }
            lastError = nil
            publishStatus(connected: true, error: .some(nil), synced: true)
        } catch let error as SyncClientError {
            fail(error)
            throw error
        }
    }

    /// Records a failed exchange: ``lastError`` and the status.
    func fail(_ error: SyncClientError) {
        lastError = error
        publishStatus(state: error.endsSync ? .stopped : error.isRefusal ? .refused : .offline, error: error)
    }

    /// Pushes everything unsent: the first half of ``syncOnce()``.
    public func push() async throws {
        try await continueDeviceLogOnFirstContact()
        try await pushAll()
    }

    /// Returns once every local change made before the call is on the server (acknowledged), or
    /// throws why it is not (unreachable, refused…). Safe while ``run()`` is active: a batch both
    /// send is stored once (pushes are idempotent). What an app calls before it is suspended.
    public func pushPending() async throws {
        let target = try replica.lastLocalSeq
        do {
            try await continueDeviceLogOnFirstContact()
            while try replica.syncProgress.pushedSeq < target {
                try await pushAll()
            }
        } catch let error as SyncClientError {
            fail(error)
            throw error
        }
    }

    /// Pulls until the server has nothing more: the second half of ``syncOnce()``.
    public func pull() async throws {
        try await continueDeviceLogOnFirstContact()
        try await pullAll()
    }

    /// Syncs until cancelled: a full round, then the live stream (or long-polls) for remote changes
    /// alongside a push after every local change. Every failure — no answer, a `5xx`, a `429`, a
    /// refused credential (`401`, `403`: the token provider is asked again first), a cursor the
    /// server does not know, an answer that does not decode — is retried after a backoff
    /// (``SyncConfiguration/backoff``: a delay drawn from a range that doubles with each failure in a
    /// row up to a minute and is never wider than what was already waited, protocol.md §17.3), for as
    /// long as the task runs. Only an answer that can
    /// never change ends it (``SyncClientError/endsSync``: the account was erased): then ``status``
    /// says ``SyncState/stopped`` and the error is thrown.
    ///
    /// No local change waits for another to be pushed: the push loop subscribes to local changes
    /// *before* it reads the outbox, so a change committed at any moment — during a round, a pull,
    /// a long-poll, a backoff or a re-stamp — is either in the outbox it reads or wakes it after.
    public func run() async throws {
        defer { publishStatus(state: .stopped) }
        failuresInARow = FailuresInARow()
        while !Task.isCancelled {
            do {
                failuresInARow.beginAttempt(outboxEmpty: try replica.outbox(limit: 1).isEmpty)
                if try !resumesLive {
                    try await syncOnce()
                    // Without streams a completed round is live; with them, `event: ready` says so.
                    failuresInARow.noteRound(streams: configuration.liveStream)
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await self.pullLive() }
                    group.addTask { try await self.pushOnLocalChanges() }
                    try await group.next()
                    group.cancelAll()
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if Task.isCancelled { throw CancellationError() }
                let failure = Self.failure(error)
                fail(failure)
                if failure.endsSync { throw failure }
                // A refused credential may be fixed where it comes from (a reissued token, a server
                // back on the right database): ask the provider again before the next attempt.
                if failure.refusesCredential { token = nil }
                let delay = configuration.backoff.delay(
                    afterFailures: failuresInARow.count, waited: failuresInARow.waited, draw: jitter())
                publishStatus(nextAttemptAt: physicalNow().addingTimeInterval(delay))
                try await sleep(Self.duration(delay))
                failuresInARow.failed(after: delay)
            }
        }
    }

    /// Whether ``run()`` goes straight to the live stream, without a push and a pull first: a device
    /// that was live (streams on, synced, holding a cursor, its account known or asked) reopens its
    /// stream at its cursor, whose first pages catch it up, while the push loop sends only what the
    /// outbox holds — one request per device when a restarted server comes back (protocol.md §17.3).
    var resumesLive: Bool {
        get throws {
            guard configuration.liveStream, replica.hasSynced, try replica.syncProgress.pullCursor != nil else {
                return false
            }
            return replica.account != nil || accountAsked
        }
    }

    /// One half of being live again (``FailuresInARow``); once both are done, the failures in a row
    /// start again and the status says `connected`, the error of the failure before cleared — what a
    /// completed round says when the client went straight to its stream.
    func noteLive(pushed: Bool = false, receiving: Bool = false) {
        let wasLive = failuresInARow.pushed && failuresInARow.receiving
        guard failuresInARow.note(pushed: pushed, receiving: receiving), !wasLive else { return }
        lastError = nil
        publishStatus(connected: true, error: .some(nil))
    }

    /// Any error of a round as a ``SyncClientError``: a replica that cannot be read or written (a
    /// full disk, say) is a failure like a network's, retried the same way.
    static func failure(_ error: any Error) -> SyncClientError {
        if let error = error as? SyncClientError { return error }
        return .transport("\(error)")
    }

    /// Seconds as a `Duration` to sleep (whole nanoseconds; a backoff's seconds are finite and small).
    static func duration(_ seconds: Double) -> Duration {
        .nanoseconds(Int64((min(max(seconds, 0), 86_400) * 1e9).rounded()))
    }

    /// Pushes the outbox, then again after every local change, until cancelled. Level-triggered:
    /// each pass subscribes first and reads the outbox second, so no commit falls between them.
    func pushOnLocalChanges() async throws {
        while !Task.isCancelled {
            let notifications = replica.localChangeNotifications()
            try await pushAll()
            noteLive(pushed: true)
            isAwaitingLocalChanges = true
            defer { isAwaitingLocalChanges = false }
            var next = notifications.makeAsyncIterator()
            guard await next.next() != nil else { return }
        }
    }

    /// Receives other devices' changes until cancelled: on the live stream while the transport can
    /// stream, else by long-polls.
    func pullLive() async throws {
        var streams = configuration.liveStream
        while !Task.isCancelled {
            if streams {
                switch try await followLiveStream() {
                case .cannotStream:
                    // Changes come by long-polls: live once pulled to the end (now, when this attempt
                    // went straight to the stream without a round).
                    streams = false
                    if !failuresInARow.completedRound { try await pullAll() }
                    noteLive(receiving: true)
                case .reopenNow: break
                case .endedByServer:
                    try await sleep(Self.duration(configuration.backoff.delayAfterStreamEnded(draw: jitter())))
                }
            } else {
                try await pullAll(wait: configuration.longPollSeconds)
                noteLive(receiving: true)
            }
        }
    }

    // MARK: Push

    /// Whether the device check of ``continueDeviceLogOnFirstContact()`` was answered (in memory: a
    /// relaunch checks again until the replica records the server).
    private var contacted = false
    /// Whether ``learnAccount()`` was answered.
    private var accountAsked = false

    /// Before a replica's first push or pull: when the server already holds a log of this device name (the
    /// app was reinstalled, the replica file deleted), the replica's changes would reuse its sequence
    /// numbers and be dropped as duplicates. They are numbered after it instead, and the device's old
    /// changes come back with the pulls (protocol.md §7, "A device whose storage was lost"). A pull
    /// too: its `highestSeq` would otherwise count them as acknowledged.
    func continueDeviceLogOnFirstContact() async throws {
        let progress = try replica.syncProgress
        guard !contacted, progress.serverGeneration == nil, progress.acknowledgedHighSeq == 0,
            progress.pullCursor == nil, progress.uncertainPush == nil
        else { return }
        let name = replica.deviceID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? replica.deviceID
        let (response, _) = try await send("GET", "/v1/devices/\(name)")
        switch response.status {
        case 200:
            try replica.continueDeviceLog(after: try decode(DeviceResponse.self, response.body).highestSeq)
        case 404:
            break  // the server has not seen this device
        default:
            throw Self.rejection(response)
        }
        contacted = true
    }

    /// Asks the server whom the credential names, once, when the replica does not know its account:
    /// rollout buckets hash the account's name (protocol.md §13.8). A server without the route
    /// (`404`, one older than revision 2.4) leaves it unknown: bucketed tips stay pending.
    func learnAccount() async throws {
        guard replica.account == nil, !accountAsked else { return }
        let (response, _) = try await send("GET", "/v1/account")
        switch response.status {
        case 200: try replica.setAccount(try decode(AccountResponse.self, response.body).account)
        case 404: break
        default: throw Self.rejection(response)
        }
        accountAsked = true
    }

    func pushAll() async throws {
        var restamped = false
        while true {
            let outbox = try replica.outbox(limit: pushLimit ?? configuration.pushBatchSize)
            guard !outbox.isEmpty else { return }
            // At most ``PushRequest/maxClientBodyBytes`` a push: a large outbox goes in pushes that
            // the server's body limit and budget admit (protocol.md §7).
            let (count, bytes) = PushRequest.body(fitting: outbox)
            let batch = Array(outbox.prefix(count))
            let body = Data(bytes)
            let response: SyncHTTPResponse
            let sent: Date
            do {
                (response, sent) = try await send("POST", "/v1/push", body: body, compressible: true)
            } catch let error as SyncClientError where error.isTransient {
                // No answer: the server may have stored the batch, and other devices pulled it.
                try replica.updateSyncProgress { $0.recordUncertainPush(through: batch[batch.count - 1].seq) }
                throw error
            }
            switch response.status {
            case 200:
                let result = try decode(PushResponse.self, response.body)
                let offset = clockCorrection(serverTime: result.serverTime, sent: sent)
                try replica.updateSyncProgress { progress in
                    if let offset { progress.clockOffset = offset }
                    progress.setPushed(through: result.highestSeq)
                    progress.noteServer(holds: result.highestSeq, generation: result.generation)
                }
                publishStatus(connected: true)
            case 409 where Self.errorCode(response.body)?.code == ErrorCode.sequenceGap.rawValue:
                // The server has less (or more) of our log than we thought: resume from what it expects.
                guard let expected = Self.errorCode(response.body)?.expectedSeq else { throw Self.rejection(response) }
                try replica.updateSyncProgress { $0.setPushed(through: expected > 0 ? expected - 1 : 0) }
            case 413 where batch.count > 1:
                // Over a limit this server sets lower than the protocol's defaults: smaller pushes.
                pushLimit = max(1, batch.count / 2)
            case 422 where Self.errorCode(response.body)?.code == ErrorCode.clockSkew.rawValue && !restamped:
                // Our clock is ahead of the server's: correct it, re-stamp what is unsent, push again.
                let detail = Self.errorCode(response.body)
                let offset = detail?.serverTime.flatMap { clockCorrection(serverTime: $0, sent: sent, force: true) }
                // What the server already holds keeps its stamps (a push whose answer was lost).
                let held = detail?.highestSeq ?? 0
                let kept = try replica.updateSyncProgress { progress in
                    if let offset { progress.clockOffset = offset }
                    if held > progress.pushedSeq { progress.setPushed(through: held) }
                    return progress.keptThroughUncertainPush(held: held, serverGeneration: detail?.generation)
                }
                try replica.restampUnacknowledgedChanges(keepingThrough: kept)
                restamped = true
            case 422 where Self.errorCode(response.body)?.code == ErrorCode.invalidChange.rawValue:
                // One change the server will never take: set it aside and push the rest (§17.2).
                let detail = Self.errorCode(response.body)
                let message = detail?.message ?? ""
                guard let detail, let index = RefusedChange.index(in: detail), batch.indices.contains(index),
                    let change = try replica.setAsideUnsentChange(seq: batch[index].seq)
                else { throw Self.rejection(response) }
                let refused = RefusedChange(change: change, reason: message)
                setAside.append(refused)
                configuration.onRefusedChange?(refused)
                publishStatus(error: .some(Self.rejection(response)))
            default:
                if response.status >= 500 {
                    // The server failed; it may have done so after committing.
                    try replica.updateSyncProgress { $0.recordUncertainPush(through: batch[batch.count - 1].seq) }
                }
                throw Self.rejection(response)
            }
        }
    }

    // MARK: Pull

    /// Pulls page after page until the server has nothing more. With
    /// ``SyncConfiguration/prefetchPages`` the pages flow through three stages at once: while page
    /// *n* is merged, page *n+1* is decoded and page *n+2* is requested (as soon as page *n+1*'s
    /// cursor is read, before its changes are decoded). The cursor is still saved only once its
    /// page is merged, so a crash or an error loses nothing and re-pulls at most the pages in flight.
    func pullAll(wait: Int = 0) async throws {
        var waitNow = wait
        var prefetched: Task<PulledPage, any Error>?
        defer { prefetched?.cancel() }
        while true {
            let pulled: PulledPage
            if let next = prefetched {
                prefetched = nil
                pulled = try await next.value
            } else {
                pulled = try await read(try await request(after: try replica.syncProgress.pullCursor, wait: waitNow))
            }
            guard let page = pulled.page else {
                pulled.next?.cancel()
                if Self.errorCode(pulled.response.body)?.code == ErrorCode.invalidCursor.rawValue {
                    try replica.updateSyncProgress { $0.pullCursor = nil }  // start over: merging is idempotent
                    continue
                }
                throw Self.rejection(pulled.response)
            }
            if page.more, configuration.prefetchPages {
                // The next page was requested from this page's cursor as read before the decode;
                // anything else (a page that decoded differently) is requested again.
                if let next = pulled.next, pulled.nextCursor == page.cursor {
                    prefetched = Task { try await self.read(try await next.value) }
                } else {
                    pulled.next?.cancel()
                    prefetched = Task { try await self.read(try await self.request(after: page.cursor, wait: 0)) }
                }
            } else {
                pulled.next?.cancel()
            }
            // The page's changes, the cursor after them and what the page says of our pushes: one
            // transaction, so a crash or an error loses nothing and re-pulls at most the pages in flight.
            let offset = clockCorrection(serverTime: page.serverTime, sent: pulled.sent)
            let settle: @Sendable (inout SyncProgress) -> Bool = { progress in
                progress.settle(after: page, reachesEnd: !page.more, clockOffset: offset)
            }
            let lostPushes: Bool
            if prefetched == nil {
                lostPushes = try replica.applyRemote(page.changes, updatingSyncProgress: settle)
            } else {
                // Off the actor, so the prefetch can send its request meanwhile.
                let replica = replica
                lostPushes = try await Task.detached {
                    try replica.applyRemote(page.changes, updatingSyncProgress: settle)
                }.value
            }
            if !page.more { publishStatus(connected: true, synced: true) }
            if configuration.followsServerCatalog, let tag = page.catalog { try await followCatalog(tag) }
            if lostPushes { try await pushAll() }
            guard page.more else { return }
            waitNow = 0
        }
    }

    /// One pull answer: the response, when its request was sent, and the page when it is one (200).
    struct PulledPage: Sendable {
        var response: SyncHTTPResponse
        var sent: Date
        var page: PullResponse?
        /// The page after this one, requested from ``nextCursor`` while this one was decoded.
        var next: Task<PullAnswer, any Error>?
        var nextCursor: String?
    }

    /// A pull's response and when its request was sent.
    struct PullAnswer: Sendable {
        var response: SyncHTTPResponse
        var sent: Date
    }

    /// Requests the page after `cursor`.
    func request(after cursor: String?, wait: Int) async throws -> PullAnswer {
        var path = "/v1/pull?limit=\(configuration.pullLimit)"
        if let cursor {
            path += "&cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor)"
        }
        if wait > 0 { path += "&wait=\(wait)" }
        let (response, sent) = try await send("GET", path, timeout: TimeInterval(wait + 30))
        return PullAnswer(response: response, sent: sent)
    }

    /// Decodes a pull answer (off the actor, so a page being merged and the next one being decoded
    /// use both cores); with ``SyncConfiguration/prefetchPages``, first requests the page after it
    /// when it says there is more.
    func read(_ answer: PullAnswer) async throws -> PulledPage {
        var pulled = PulledPage(response: answer.response, sent: answer.sent)
        guard answer.response.status == 200 else { return pulled }
        let body = answer.response.body
        guard configuration.prefetchPages else {
            pulled.page = try Self.decode(PullResponse.self, body)
            return pulled
        }
        if let continuation = PullResponse.continuation(of: body), continuation.more {
            pulled.nextCursor = continuation.cursor
            pulled.next = Task { try await self.request(after: continuation.cursor, wait: 0) }
        }
        do {
            pulled.page = try await Task.detached { try Self.decode(PullResponse.self, body) }.value
        } catch {
            pulled.next?.cancel()
            throw error
        }
        return pulled
    }

    // MARK: Helpers

    /// Sends one request, retrying after `429` and an expired JWT. A `compressible` body of at least
    /// 1,024 bytes goes gzipped while ``compressesPushes`` holds.
    // MARK: Catalog

    /// Fetches and applies the server's catalog when `tag` (the version a pull named) is neither the
    /// one applied nor one refused before. A catalog that does not validate is refused: the replica
    /// keeps its catalog, ``catalogError`` says why, and the same version is not fetched again.
    func followCatalog(_ tag: String?) async throws {
        let applied = try replica.serverCatalogTag
        // No tag: whatever the server holds now, asked conditionally (`304` when it is the applied one).
        if let tag { guard tag != applied, tag != refusedCatalogTag else { return } }
        var headers: [String: String] = [:]
        if let applied { headers["If-None-Match"] = applied }
        let (response, _) = try await send("GET", "/v1/catalog", headers: headers)
        switch response.status {
        case 200:
            let received = response.headers["etag"] ?? tag ?? "unversioned"
            do {
                let catalog = try replica.applyServerCatalog(response.body, tag: received)
                catalogError = nil
                refusedCatalogTag = nil
                configuration.onServerCatalog?(.applied(tag: received, catalog: catalog, text: response.body))
            } catch let error as Catalog.ValidationError {
                refusedCatalogTag = received
                catalogError = "the server's catalog \(received) is not valid: \(error.description)"
                lastError = .invalidCatalog(catalogError!)
                publishStatus(error: .some(lastError))
                configuration.onServerCatalog?(.refused(tag: received, reason: error.description))
            }
        case 304, 404:
            return  // current already, or removed meanwhile: keep what the replica has
        default:
            throw Self.rejection(response)
        }
    }

    func send(
        _ method: String, _ path: String, body: Data? = nil, headers extra: [String: String] = [:],
        compressible: Bool = false, timeout: TimeInterval = 30
    ) async throws -> (SyncHTTPResponse, Date) {
        var refreshed = false
        var rateLimited = 0
        // Compressed once; retries after 429 or a token refresh send the same bytes.
        let gzipped =
            compressible && compressesPushes && (body?.count ?? 0) >= 1024 ? body.flatMap { Gzip.compress($0) } : nil
        while true {
            var headers = ["Authorization": "Bearer \(try await currentToken())", "Accept": "application/json"]
            headers[DeviceContext.headerName] = replica.deviceContext.headerValue
            headers.merge(extra) { _, new in new }
            if body != nil { headers["Content-Type"] = "application/json" }
            var wire = body
            if compressesPushes, let gzipped {
                wire = gzipped
                headers["Content-Encoding"] = "gzip"
            }
            let sent = physicalNow()
            let response: SyncHTTPResponse
            do {
                response = try await transport.send(
                    SyncHTTPRequest(method: method, path: path, headers: headers, body: wire, timeout: timeout))
            } catch let error as SyncClientError {
                throw error
            } catch {
                throw SyncClientError.unreachable("\(error.localizedDescription)")
            }
            switch response.status {
            case 401
            where Self.errorCode(response.body)?.code == ErrorCode.tokenExpired.rawValue
                && configuration.tokenProvider != nil && !refreshed:
                // The JWT expired: ask for a fresh one, once per request.
                token = nil
                refreshed = true
            case 401
            where Self.errorCode(response.body)?.code == ErrorCode.tokenExpired.rawValue
                && configuration.tokenProvider != nil:
                // Expired again right after a refresh: the provider's token is stale for now. Not a
                // reason to stop syncing for good: back off, and ask the provider again then.
                token = nil
                throw Self.rejection(response)
            case 401:
                throw Self.refusedToken(response)
            case 415 where headers["Content-Encoding"] != nil,
                400
            where headers["Content-Encoding"] != nil
                && Self.errorCode(response.body)?.code == ErrorCode.malformedJSON.rawValue:
                // A server that does not inflate push bodies (or a transport that dropped the header):
                // send this one and the next ones plain.
                compressesPushes = false
            case 429 where rateLimited < configuration.rateLimitRetries,
                503 where rateLimited < configuration.rateLimitRetries && response.headers["retry-after"] != nil:
                // The server (or a proxy before it) says when it will accept the request: wait that
                // long, never less (protocol.md §17.3), and say so meanwhile (§17.4).
                rateLimited += 1
                let seconds = min(max(response.headers["retry-after"].flatMap { Int($0) } ?? 1, 1), 3600)
                lastError = Self.rejection(response)
                publishStatus(
                    state: .refused, error: .some(lastError),
                    nextAttemptAt: physicalNow().addingTimeInterval(TimeInterval(seconds)))
                try await sleep(.seconds(seconds))
            default:
                if rateLimited > 0, response.status < 400 {
                    // The refusal the waits reported is over: this request was answered.
                    lastError = nil
                    publishStatus(connected: true, error: .some(nil))
                }
                return (response, sent)
            }
        }
    }

    /// The credential to send: the configuration's token, or one from its provider.
    func currentToken() async throws -> String {
        if let token { return token }
        guard let provider = configuration.tokenProvider else { return configuration.token }
        do {
            let fresh = try await provider()
            token = fresh
            return fresh
        } catch {
            throw SyncClientError.unreachable("could not get a token from the token provider: \(error)")
        }
    }

    /// The clock correction a server answer calls for: the server's time less the midpoint of the
    /// request's round trip (taken as the server's reading time), when it differs from the current
    /// correction by more than a second (or `force`); `nil` when it does not, or the server's time is
    /// outside what an HLC can carry (nonsense, never a reason to trap).
    func clockCorrection(serverTime: Int64, sent: Date, force: Bool = false) -> Int64? {
        let received = physicalNow()
        let midpoint = Int64((sent.timeIntervalSince1970 + received.timeIntervalSince1970) / 2 * 1000)
        guard (0...Int64(HLC.maxMilliseconds)).contains(serverTime) else { return nil }
        let offset = serverTime - midpoint
        return force || abs(offset - replica.clockOffset) > 1000 ? offset : nil
    }

    func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try Self.decode(type, data)
    }

    func decode<T: ChangePage>(_ type: T.Type, _ data: Data) throws -> T {
        try Self.decode(type, data)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try answer { try JSONCoding.decode(T.self, from: data) }
    }

    /// A page through ``JSONCoding``'s reader for pages.
    static func decode<T: ChangePage>(_ type: T.Type, _ data: Data) throws -> T {
        try answer { try JSONCoding.decode(T.self, from: data) }
    }

    /// A server answer that does not decode is a transport failure.
    private static func answer<T>(_ decode: () throws -> T) throws -> T {
        do {
            return try decode()
        } catch {
            throw SyncClientError.transport("unexpected response from the server: \(error)")
        }
    }

    static func errorCode(_ data: Data) -> ErrorBody.Detail? {
        (try? JSONCoding.decode(ErrorBody.self, from: data))?.error
    }

    /// A `401` other than an expired token's: the credential is refused — or, with
    /// `account_erased`, the account is gone for good (``SyncClientError/endsSync``).
    static func refusedToken(_ response: SyncHTTPResponse) -> SyncClientError {
        refusedToken(response.body)
    }

    static func refusedToken(_ body: Data) -> SyncClientError {
        let detail = errorCode(body)
        if detail?.code == ErrorCode.accountErased.rawValue {
            return .rejected(status: 401, code: ErrorCode.accountErased.rawValue, message: detail?.message ?? "")
        }
        return .unauthorized(detail?.message ?? "401")
    }

    static func rejection(_ response: SyncHTTPResponse) -> SyncClientError {
        let detail = Self.errorCode(response.body)
        return .rejected(
            status: response.status, code: detail?.code ?? "unknown",
            message: detail?.message ?? String(decoding: response.body.prefix(200), as: UTF8.self))
    }
}
