import TipSyncDeviceService

extension ServerConfiguration {
    /// The settings the `/v1` routes hold requests to.
    var syncRouteLimits: SyncRouteLimits {
        SyncRouteLimits(
            maxBodyBytes: maxBodyBytes, maxBatch: maxBatch, maxPullLimit: maxPullLimit, maxClockSkew: maxClockSkew,
            maxWait: maxWait, longPollGather: longPollGather, maxLiveStreamsPerDevice: maxLiveStreamsPerDevice,
            liveStallTimeout: liveStallTimeout)
    }
}
