/// `GET /v1/account`: whom the credential names (protocol.md §5) — the account's name, which rollout
/// buckets hash (§13.8), and the device's.
public struct AccountResponse: Sendable, Hashable, Codable {
    public var account: String
    public var device: String
    public var serverTime: Int64

    public init(account: String, device: String, serverTime: Int64) {
        self.account = account
        self.device = device
        self.serverTime = serverTime
    }
}
