import Foundation

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

    public init(server: URL, token: String, device: String, tokenCommand: String? = nil) {
        self.server = server
        self.token = token
        self.device = device
        self.tokenCommand = tokenCommand
    }
}
