import Configuration
package import Logging
package import TipSyncDeviceService
package import TipSyncServerBasics
package import TipSyncStorage

/// Everything `tipsync-server serve` can be told: where to listen and store, limits, timing, and
/// features. Each value's key, flag, environment variable, unit and default are written once, where
/// ``init(reading:)`` reads it; ``init()`` is those defaults, and tests change the fields they need.
package struct ServerConfiguration: Sendable {
    /// The address to bind.
    package var httpHost: String
    /// TLS in the server itself (``TLSFiles``): `nil` serves plain HTTP (behind a TLS proxy, or on
    /// a private network).
    package var tls: TLSFiles?
    /// The port to bind (0: any free port; tests read it in `onServerRunning`).
    package var httpPort: Int
    /// Where the server keeps its data.
    package var database: DatabaseLocation
    /// How long the server (and each command) waits at start for PostgreSQL to answer, retrying with
    /// a logged backoff, before it gives up with an error naming the database's address.
    package var databaseWait: Duration
    /// The level below which log records are dropped.
    package var logLevel: Logger.Level
    /// How log records are written to standard error: a line of text, or a JSON object per line.
    package var logFormat: LogFormat
    /// Log every request at `info` (method, path with names and secrets redacted, status, duration),
    /// whichever way it is served; off, requests are logged at `debug`.
    package var accessLog: Bool
    /// When set, `/metrics` answers only requests carrying `Authorization: Bearer` this token;
    /// `nil`: `/metrics` is open, like `/health`.
    package var metricsToken: String?
    /// Larger request bodies get `413 body_too_large`.
    package var maxBodyBytes: Int
    /// More changes in one push get `413 batch_too_large`.
    package var maxBatch: Int
    /// The largest `limit` a pull may ask for.
    package var maxPullLimit: Int
    /// Changes stamped further ahead of the server's clock get `422 clock_skew`; a display's
    /// `lastDisplayed` further ahead is `422 invalid_change`.
    package var maxClockSkew: Duration
    /// The interval of comment lines on idle live streams.
    package var heartbeat: Duration
    /// A live stream whose client has not read what the server wrote to it within this time is
    /// ended: a page waiting for a client that does not read stays in memory only this long.
    package var liveStallTimeout: Duration
    /// Live streams one device may hold open; opening one more ends its oldest (a device that lost a
    /// connection without the server noticing reconnects at once).
    package var maxLiveStreamsPerDevice: Int
    /// The longest `wait` a long-poll pull may ask for; a longer one is `400 invalid_parameter`.
    package var maxWait: Duration
    /// A long-poll (`wait` > 0) that finds changes already waiting holds its answer this long and
    /// sends everything that arrived meanwhile: a device of a busy account pulls a few times a second
    /// instead of once per change. A long-poll that waited for news answers at once; zero never holds.
    package var longPollGather: Duration
    /// A connection must deliver a complete request head this soon after it opens or after its
    /// previous response ended (the keep-alive idle time), or it is closed: idle and slow-loris
    /// connections cannot hold descriptors.
    package var requestHeadTimeout: Duration
    /// A request's whole body must arrive this soon after its head, or the connection is closed.
    package var requestBodyTimeout: Duration
    /// Open connections beyond this wait in the kernel's backlog. `nil`: the open-file limit less
    /// 256 descriptors kept for the database and logs (at least 64).
    package var maxConnections: Int?
    /// Requests whose middleware and route run at once; the rest wait their turn holding only their
    /// connection (``RequestAdmission``). Monitoring (`/health`, `/ready`, `/metrics`) never waits,
    /// and a request waiting for something else (a long-poll for news) gives its place up meanwhile.
    package var requestsInFlight: Int
    /// Connections the kernel holds until the server accepts them (`listen(2)`'s backlog, capped by
    /// `net.core.somaxconn`).
    package var listenBacklog: Int
    /// `/v1` requests per second each device may make on average, and at once. Beyond it: `429
    /// rate_limited` with `Retry-After`. A rate of 0 turns the limit off.
    package var requestRate: RateLimit
    /// Pushed changes per second each device may store on average, and at once.
    package var changeRate: RateLimit
    /// Decoded push-body bytes per device (after inflating): what its pushes cost the server to
    /// parse and check. A body's bytes are spent whether or not the push is then accepted, and a
    /// device whose budget is spent is refused before its next body is even inflated.
    package var bodyByteRate: RateLimit
    /// Bytes of change text each device's pulls and live streams make the server read from the
    /// log (pages read for it alone: a page a push handed over, or one another stream of the account
    /// read, costs nothing; kept state pages neither). A device in debt is answered `429` before its
    /// next pull or stream opening reads anything, and its open streams wait before reading their
    /// next page, so one device opening streams at many distinct cursors cannot hold the store and
    /// the event loops others need (issue 74, item 2).
    package var readByteRate: RateLimit
    /// How long a request refused for its device's request rate waits before its `429` is sent: a
    /// client that ignores `Retry-After` and re-sends as soon as it is answered then costs the
    /// server a request a second per connection, not thousands. Zero answers at once.
    package var rateRefusalDelay: Duration
    /// Refused sign-ins (bad device tokens or JWTs on `/v1`, bad admin keys on `/admin/v1`, failed
    /// console logins) each client address may make per second on average, and at once. Past it,
    /// that address's sign-ins are answered `429 rate_limited` with `Retry-After` before any
    /// credential is looked at.
    package var failedSignInRate: RateLimit
    /// An account is compacted in the background once its log has grown by this many entries since
    /// its last compaction. 0 turns it off.
    package var autoCompactAfter: Int
    /// The server counts requests per interval of this length; when an interval's count falls to a
    /// tenth or less of the busiest since the last release (a burst is over), it frees SQLite's page
    /// caches and idle reader connections, forgets rate-limit buckets of quiet devices, the device
    /// tokens it remembers and the zlib streams it keeps for compressed answers, empties
    /// libdispatch's per-thread continuation caches, and returns glibc's free heap pages to the system
    /// (``MemoryRelease``, ``DispatchContinuationCache``). Zero turns it off.
    package var memoryReleaseInterval: Duration
    /// Serve the operator console at `/console` (admin-key login).
    package var console: Bool
    /// Web origins (`https://app.example.com`, or `*` for any) whose pages may call `/v1` (``CORSMiddleware``).
    package var corsOrigins: Set<String>
    /// Peers whose `X-Forwarded-For` names the client, for the sign-in throttle: addresses, or
    /// `private` for loopback and private networks (a proxy on this host or its network). Empty: the
    /// header is believed from no one, and every client is its connection's peer.
    package var trustedProxies: Set<String>
    /// Device sign-in with an identity provider's JWTs.
    package var jwt: JWTSignIn.Configuration
    /// The environment file the other settings were also read from, if any.
    package var configFile: String?

    /// The defaults: every setting as if nothing set it.
    package init() {
        do {
            self = try Self(reading: ConfigReader(provider: InMemoryProvider(values: [:])))
        } catch {
            preconditionFailure("the server's defaults are valid settings: \(error)")
        }
    }
}
