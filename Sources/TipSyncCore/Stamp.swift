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

    /// Device ids are equal when their code points are (never by canonical equivalence, as Swift's
    /// `String ==` would have it), consistent with `<`.
    public static func == (lhs: Stamp, rhs: Stamp) -> Bool {
        lhs.hlc == rhs.hlc && lhs.device.utf8.elementsEqual(rhs.device.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hlc)
        hasher.combine(device.utf8.count)
        var device = device  // contiguous UTF-8: hashed as one run of bytes
        device.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    public var description: String { "\(hlc)@\(device)" }
}
