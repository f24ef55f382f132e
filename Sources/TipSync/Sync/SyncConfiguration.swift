public import Foundation

/// How a replica syncs: which server, which credential, and the pacing of its rounds.
public struct SyncConfiguration: Sendable {
    public var server: URL
    /// A device token (`ts_…`) or a JWT; used until ``tokenProvider`` gives another.
    public var token: String
    /// Asked for a credential before the first request and again whenever the server answers
    /// `401 token_expired` (a JWT from the app's identity provider). Errors it throws count as the
    /// server being unreachable: the client backs off and asks again.
    public var tokenProvider: (@Sendable () async throws -> String)?
    /// How many times a request answered `429 rate_limited` (or `503` with `Retry-After`) is retried
    /// after its `Retry-After` before the round fails (and ``SyncClient/run()`` backs off).
    public var rateLimitRetries = 5
    /// Changes per push (the server's default limit is 1000).
    public var pushBatchSize = 500
    /// Sends push bodies of at least 1,024 bytes with `Content-Encoding: gzip` (about a tenth of the
    /// bytes on the wire; protocol.md section 5). A server that answers `415` gets them plain from then on.
    public var compressPushes = true
    /// Changes per pull page: the protocol's maximum, 5000. Each page costs a request and a replica
    /// transaction, so a new device's first sync of 100,000 changes takes about a third longer in
    /// pages of 1,000 (docs/benchmark-history.md, "Cold start"); later pulls are small whatever the limit.
    public var pullLimit = 5000
    /// Requests and decodes the next pull page while the current one is merged into the replica
    /// (a new device's first sync takes about half as long on two cores). Off, requests go one at
    /// a time, which deterministic replays (`tipsync-sim`) need.
    public var prefetchPages = true
    /// Receive other devices' changes on a live stream that carries them (`GET /v1/live?cursor=…`,
    /// protocol.md §9): one connection held open, each change merged as it arrives, no request per
    /// change. Off, or with a ``transport`` that cannot stream: long-polls (`GET /v1/pull?wait=…`).
    public var liveStream = true
    /// Seconds a live long-poll waits on the server for news.
    public var longPollSeconds = 25
    /// Seconds the live stream may stay silent before the client takes the connection for lost and
    /// reconnects (the server writes a heartbeat every 15 s by default).
    public var liveStreamSilence = 60
    /// Retry delays (protocol.md §17.3, ``Backoff``): after the n-th failure in a row a delay drawn
    /// uniformly from 0 to `min(maximumBackoff, initialBackoff × 2^(n−1))` seconds; a live stream the
    /// server ended is reopened after 0 to `initialBackoff` seconds.
    public var initialBackoff: Double = 1
    public var maximumBackoff: Double = 60
    /// ``initialBackoff`` and ``maximumBackoff`` as the rule that uses them.
    public var backoff: Backoff { Backoff(base: initialBackoff, maximum: maximumBackoff) }
    /// How requests reach the server; `nil` (the default): `URLSession` to ``server``. Set it to
    /// route through your own HTTP stack, or to an in-process server in tests.
    public var transport: (any SyncTransport)?
    /// Follow the server's catalog (`protocol.md` §16): when a pull names a catalog version this
    /// replica has not applied, fetch `GET /v1/catalog`, validate it and apply it
    /// (``TipsReplica/applyServerCatalog(_:tag:)``); one that does not validate is never applied.
    /// The server's tips also override tips declared in code with the same id (rules, options,
    /// content), and `Tips.configure` loads the one received last before any pull.
    /// Off by default: the replica keeps the tips it was given.
    public var followsServerCatalog = false
    /// Told of every server catalog the client applied or refused (for logs).
    public var onServerCatalog: (@Sendable (ServerCatalogEvent) -> Void)?
    /// Told of every local change the server refused and the client set aside (protocol.md §17.2):
    /// the change and the server's reason. The changes after it are pushed on; report it (a log, a
    /// crash reporter), since the app wrote something no server will take.
    public var onRefusedChange: (@Sendable (RefusedChange) -> Void)?
    /// Told of every change of ``SyncClient/status`` (before, after): for logs of outages and
    /// recoveries. ``SyncClient/statusUpdates()`` streams the same.
    public var onStatusChange: (@Sendable (SyncStatus, SyncStatus) -> Void)?
    /// Seconds a device that has never completed a sync holds back tips that would be available
    /// (protocol.md §17.1): long enough for a first pull on a slow network, short enough that a
    /// device that cannot reach the server still shows its onboarding tips. `0`: no hold.
    public var firstSyncTimeout: Double = 5

    public init(server: URL, token: String) {
        self.server = server
        self.token = token
    }

    /// Syncs with credentials from `tokenProvider` (for example a JWT from the app's identity
    /// provider), asked again when the server says the current one expired.
    public init(server: URL, tokenProvider: @escaping @Sendable () async throws -> String) {
        self.server = server
        self.token = ""
        self.tokenProvider = tokenProvider
    }
}

extension Tips.ConfigurationOption {
    /// Syncs this replica with a TipSync server, with a device token from `tipsync-server tokens create`.
    public static func sync(server: URL, token: String) -> Self {
        Self(kind: .sync(SyncConfiguration(server: server, token: token)))
    }

    /// Syncs with full control over pacing.
    public static func sync(_ configuration: SyncConfiguration) -> Self {
        Self(kind: .sync(configuration))
    }
}
