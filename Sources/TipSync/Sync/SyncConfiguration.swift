import Foundation

/// How a replica syncs: which server, which device token, and the pacing of its rounds.
public struct SyncConfiguration: Sendable {
    public var server: URL
    public var token: String
    /// Changes per push (the server's default limit is 1000).
    public var pushBatchSize = 500
    /// Changes per pull page.
    public var pullLimit = 1000
    /// Seconds a live long-poll waits on the server for news.
    public var longPollSeconds = 25
    /// Retry delays: doubling from `initialBackoff` up to `maximumBackoff` seconds, with jitter.
    public var initialBackoff: Double = 0.5
    public var maximumBackoff: Double = 60

    public init(server: URL, token: String) {
        self.server = server
        self.token = token
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
