/// The answer to `GET /v1/devices/{name}` (protocol.md §5): a device of the caller's account and the
/// highest `seq` the server holds from it.
public struct DeviceResponse: Sendable, Hashable, Codable {
    public var device: String
    public var highestSeq: Int64
    public var serverTime: Int64

    public init(device: String, highestSeq: Int64, serverTime: Int64) {
        self.device = device
        self.highestSeq = highestSeq
        self.serverTime = serverTime
    }
}
