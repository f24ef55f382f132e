/// Who is calling: the account and device a bearer token belongs to.
public struct DeviceIdentity: Sendable, Hashable {
    public var accountID: Int64
    public var device: String

    public init(accountID: Int64, device: String) {
        self.accountID = accountID
        self.device = device
    }
}
