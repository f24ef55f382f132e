/// The sync server's limits and timing. Every value is read by `tipsync-server serve` from a flag or
/// the environment variable named beside it (see `README.md`, "Server configuration").
public struct ServerConfiguration: Sendable {
    /// `--max-body-bytes` / `TIPSYNC_MAX_BODY_BYTES`: larger request bodies get 413 `body_too_large`.
    public var maxBodyBytes = 4 * 1024 * 1024
    /// `--max-batch` / `TIPSYNC_MAX_BATCH`: more changes in one push get 413 `batch_too_large`.
    public var maxBatch = 1000
    /// `--max-pull-limit` / `TIPSYNC_MAX_PULL_LIMIT`: the largest `limit` a pull may ask for.
    public var maxPullLimit = 5000
    /// `--max-clock-skew` / `TIPSYNC_MAX_CLOCK_SKEW` (seconds): changes stamped further ahead of the
    /// server's clock get 422 `clock_skew`.
    public var maxClockSkewMilliseconds: Int64 = 300_000
    /// `--heartbeat` / `TIPSYNC_HEARTBEAT` (seconds): comment lines on idle live streams.
    public var heartbeatSeconds = 15.0
    /// `--max-wait` / `TIPSYNC_MAX_WAIT`: the longest `wait` a long-poll pull may ask for, in seconds;
    /// a longer one is `400 invalid_parameter`.
    public var maxWaitSeconds = 60.0
    /// `--long-poll-gather` / `TIPSYNC_LONG_POLL_GATHER` (milliseconds): a long-poll (`wait` > 0) that
    /// finds changes already waiting holds its answer this long, and sends everything that arrived
    /// meanwhile: a device of a busy account pulls a few times a second instead of once per change.
    /// A long-poll that waited for news answers at once. 0 never holds an answer.
    public var longPollGatherMilliseconds = 10
    /// `--request-head-timeout` / `TIPSYNC_REQUEST_HEAD_TIMEOUT` (seconds): a connection must deliver a
    /// complete request head this soon after it opens or after its previous response ended (the
    /// keep-alive idle time), or it is closed. Stops idle and slow-loris connections holding descriptors.
    public var requestHeadTimeoutSeconds = 10.0
    /// `--request-body-timeout` / `TIPSYNC_REQUEST_BODY_TIMEOUT` (seconds): a request's whole body must
    /// arrive this soon after its head, or the connection is closed.
    public var requestBodyTimeoutSeconds = 30.0
    /// `--max-connections` / `TIPSYNC_MAX_CONNECTIONS`: open connections beyond this wait in the
    /// kernel's backlog. `nil`: the open-file limit less 256 descriptors kept for the database and logs.
    public var maxConnections: Int?
    /// `--rate-requests`, `--rate-requests-burst` / `TIPSYNC_RATE_REQUESTS`, `TIPSYNC_RATE_REQUESTS_BURST`:
    /// `/v1` requests per second each device may make on average, and at once. Beyond it: 429
    /// `rate_limited` with `Retry-After`. 0 turns the limit off.
    public var requestRate = RateLimit(perSecond: 20, burst: 200)
    /// `--rate-changes`, `--rate-changes-burst` / `TIPSYNC_RATE_CHANGES`, `TIPSYNC_RATE_CHANGES_BURST`:
    /// pushed changes per second each device may store on average, and at once.
    public var changeRate = RateLimit(perSecond: 1000, burst: 10_000)
    /// `--rate-failed-sign-ins`, `--rate-failed-sign-ins-burst` / `TIPSYNC_RATE_FAILED_SIGN_INS`,
    /// `TIPSYNC_RATE_FAILED_SIGN_INS_BURST`: refused sign-ins (bad device tokens or JWTs on `/v1`, bad
    /// admin keys on `/admin/v1`, failed console logins) each client address may make per second on
    /// average, and at once. Past it, that address's sign-ins are answered 429 `rate_limited` with
    /// `Retry-After` before any credential is looked at. 0 turns the limit off.
    public var failedSignInRate = RateLimit(perSecond: 0.2, burst: 20)
    /// `--auto-compact-after` / `TIPSYNC_AUTO_COMPACT_AFTER`: an account is compacted in the background
    /// once its log has grown by this many entries since its last compaction. 0 turns it off.
    public var autoCompactAfter = 10_000
    /// `--memory-release-interval` / `TIPSYNC_MEMORY_RELEASE_INTERVAL` (seconds): the server counts
    /// requests per interval of this length; when an interval's count falls to a tenth or less of
    /// the busiest since the last release (a burst is over), it frees SQLite's page caches and idle
    /// reader connections, forgets rate-limit buckets of quiet devices, empties libdispatch's
    /// per-thread continuation caches, and returns glibc's free heap pages to the system
    /// (``MemoryRelease``, ``DispatchContinuationCache``). 0 turns it off.
    public var memoryReleaseIntervalSeconds = 30.0
    /// `--console` / `TIPSYNC_CONSOLE=1`: serve the operator console at `/console` (admin-key login).
    public var console = false
    /// `--cors-origins` / `TIPSYNC_CORS_ORIGINS`: comma-separated web origins
    /// (`https://app.example.com`, or `*` for any) whose pages may call `/v1` (``CORSMiddleware``).
    /// Empty (the default): none.
    public var corsOrigins: Set<String> = []

    public init() {}
}
