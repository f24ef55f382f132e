public import Foundation
public import TipSync

/// What `tipsync-agent init` records in the store (`agent.json`, owner-only): where to sync and
/// as which device.
public struct AgentConfiguration: Codable, Sendable, Hashable {
    /// The sync server's base URL.
    public var server: URL
    /// This device's bearer token (from `tipsync-server tokens create`); empty with ``tokenCommand``.
    public var token: String
    /// This device's name: its replica's device id, the one the token was issued for.
    public var device: String
    /// A shell command that prints a fresh credential (a JWT from the app's identity provider) on
    /// standard output; run before the first request and whenever the server says the token expired.
    public var tokenCommand: String?
    /// Follow the server's catalog (`init --follow-catalog`, `protocol.md` §16): every catalog the
    /// server delivers that validates replaces the store's catalog, at once while `run` is up.
    public var followsServerCatalog: Bool
    /// Seconds a store that has never synced holds back tips that would be available, waiting for
    /// its first pull (`init --first-sync-timeout`, protocol.md §17.1); `nil`: the sync client's
    /// default (``SyncConfiguration/firstSyncTimeout``).
    public var firstSyncTimeout: Double?
    /// What targeting reads about this device (protocol.md §13.8), when `init` was told: its
    /// platform (default: the one it runs on), the app's version and its locale (default: the
    /// system's).
    public var platform: String?
    public var appVersion: String?
    public var locale: String?

    public init(
        server: URL, token: String, device: String, tokenCommand: String? = nil, followsServerCatalog: Bool = false,
        firstSyncTimeout: Double? = nil
    ) {
        self.server = server
        self.token = token
        self.device = device
        self.tokenCommand = tokenCommand
        self.followsServerCatalog = followsServerCatalog
        self.firstSyncTimeout = firstSyncTimeout
    }

    private enum CodingKeys: String, CodingKey {
        case server, token, device, tokenCommand, followsServerCatalog, firstSyncTimeout, platform, appVersion, locale
    }

    /// This device's targeting context: the system's (``DeviceContext/current``) with what `init` set.
    public func deviceContext(account: String?) -> DeviceContext {
        var context = DeviceContext.current
        if let platform { context.platform = platform }
        if let appVersion { context.appVersion = appVersion }
        if let locale { context.locale = locale }
        context.account = account
        return context
    }

    /// The first-sync hold this store uses: its own, else the sync client's default.
    public var effectiveFirstSyncTimeout: Double {
        firstSyncTimeout ?? SyncConfiguration(server: server, token: "").firstSyncTimeout
    }

    /// Stores written before `followsServerCatalog` existed read as not following.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        server = try container.decode(URL.self, forKey: .server)
        token = try container.decode(String.self, forKey: .token)
        device = try container.decode(String.self, forKey: .device)
        tokenCommand = try container.decodeIfPresent(String.self, forKey: .tokenCommand)
        followsServerCatalog = try container.decodeIfPresent(Bool.self, forKey: .followsServerCatalog) ?? false
        firstSyncTimeout = try container.decodeIfPresent(Double.self, forKey: .firstSyncTimeout)
        platform = try container.decodeIfPresent(String.self, forKey: .platform)
        appVersion = try container.decodeIfPresent(String.self, forKey: .appVersion)
        locale = try container.decodeIfPresent(String.self, forKey: .locale)
    }
}
