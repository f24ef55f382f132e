/// The total order every last-writer-wins decision uses: an ``HLC`` and, to break exact ties, the
/// writing device's id (compared bytewise as UTF-8).
public struct Stamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var hlc: HLC
    public var device: String

    public init(hlc: HLC, device: String) {
        self.hlc = hlc
        self.device = device
    }

    public static func < (lhs: Stamp, rhs: Stamp) -> Bool {
        if lhs.hlc != rhs.hlc { return lhs.hlc < rhs.hlc }
        return lhs.device.utf8.lexicographicallyPrecedes(rhs.device.utf8)
    }

    public var description: String { "\(hlc)@\(device)" }
}
