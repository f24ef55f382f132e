public import Foundation
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
    public internal(set) var lastError: SyncClientError?
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
    public internal(set) var catalogError: String?
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
    /// Whether the device check of ``continueDeviceLogOnFirstContact()`` was answered (in memory: a
    /// relaunch checks again until the replica records the server).
    var contacted = false
    /// Whether ``learnAccount()`` was answered.
    var accountAsked = false

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
            try await round()
        } catch let error as SyncClientError {
            fail(error)
            throw error
        }
    }

    /// ``syncOnce()`` but for its failure's status: ``run()`` publishes that once, with its next attempt.
    func round() async throws {
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
    }

    /// Records a failed exchange: ``lastError`` and the status, with when the next attempt is
    /// (`nil`: none is planned — a round the app asked for).
    func fail(_ error: SyncClientError, nextAttemptAt: Date? = nil) {
        lastError = error
        publishStatus(
            state: error.endsSync ? .stopped : error.isRefusal ? .refused : .offline, error: error,
            nextAttemptAt: .some(nextAttemptAt))
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
                    try await round()
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
                if failure.endsSync {
                    fail(failure)
                    throw failure
                }
                // A refused credential may be fixed where it comes from (a reissued token, a server
                // back on the right database): ask the provider again before the next attempt.
                if failure.refusesCredential { token = nil }
                let delay = configuration.backoff.delay(
                    afterFailures: failuresInARow.count, waited: failuresInARow.waited, draw: jitter())
                // One status per failure, saying when the next attempt is.
                fail(failure, nextAttemptAt: physicalNow().addingTimeInterval(delay))
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
}
