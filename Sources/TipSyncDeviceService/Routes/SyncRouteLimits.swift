/// The bounds the `/v1` routes hold requests to. The settings themselves (key, flag, default,
/// documentation) are `ServerConfiguration`'s, in the composition root, which hands the routes
/// these values; a test builds them directly.
package struct SyncRouteLimits: Sendable {
    /// Larger request bodies get `413 body_too_large`.
    package var maxBodyBytes: Int
    /// More changes in one push get `413 batch_too_large`.
    package var maxBatch: Int
    /// The largest `limit` a pull or live stream may ask for.
    package var maxPullLimit: Int
    /// Changes stamped further ahead of the server's clock get `422 clock_skew`.
    package var maxClockSkew: Duration
    /// The longest `wait` a long-poll pull may ask for.
    package var maxWait: Duration
    /// How long a long-poll that found changes already waiting holds its answer.
    package var longPollGather: Duration
    /// Live streams one device may hold open.
    package var maxLiveStreamsPerDevice: Int
    /// How long a live stream whose client does not read may stay open.
    package var liveStallTimeout: Duration

    package init(
        maxBodyBytes: Int, maxBatch: Int, maxPullLimit: Int, maxClockSkew: Duration, maxWait: Duration,
        longPollGather: Duration, maxLiveStreamsPerDevice: Int, liveStallTimeout: Duration
    ) {
        self.maxBodyBytes = maxBodyBytes
        self.maxBatch = maxBatch
        self.maxPullLimit = maxPullLimit
        self.maxClockSkew = maxClockSkew
        self.maxWait = maxWait
        self.longPollGather = longPollGather
        self.maxLiveStreamsPerDevice = maxLiveStreamsPerDevice
        self.liveStallTimeout = liveStallTimeout
    }
}
