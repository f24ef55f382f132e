/// A hybrid logical clock timestamp: 48 bits of physical milliseconds since 1970 and a 16-bit logical counter.
///
/// Ordered by milliseconds, then counter. Its wire form is a fixed-width lowercase hex string
/// `"MMMMMMMMMMMM-CCCC"` (12 hex digits of milliseconds, a dash, 4 hex digits of counter), so that
/// string order equals timestamp order. `rawValue` packs it into one 64-bit integer for storage.
public struct HLC: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The largest physical time an HLC can carry (2^48 - 1 milliseconds, in the year 10889).
    public static let maxMilliseconds: UInt64 = (1 << 48) - 1
    /// The smallest timestamp, earlier than any real event.
    public static let zero = HLC(milliseconds: 0, counter: 0)

    /// Physical component: milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: UInt64
    /// Logical component, ordering events within the same millisecond.
    public var counter: UInt16

    public init(milliseconds: UInt64, counter: UInt16) {
        precondition(milliseconds <= Self.maxMilliseconds, "HLC milliseconds overflow 48 bits")
        self.milliseconds = milliseconds
        self.counter = counter
    }

    /// Both components packed as `milliseconds << 16 | counter`; non-negative for any real date.
    public var rawValue: Int64 { Int64(bitPattern: milliseconds << 16 | UInt64(counter)) }

    public init(rawValue: Int64) {
        let bits = UInt64(bitPattern: rawValue)
        self.init(milliseconds: bits >> 16, counter: UInt16(truncatingIfNeeded: bits))
    }

    public static func < (lhs: HLC, rhs: HLC) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The wire form, `"MMMMMMMMMMMM-CCCC"`.
    public var description: String {
        Self.hex(milliseconds, width: 12) + "-" + Self.hex(UInt64(counter), width: 4)
    }

    /// Parses the wire form; `nil` when `text` is not exactly 12 hex digits, `-`, 4 hex digits.
    public init?(_ text: String) {
        var text = text
        guard let hlc = text.withUTF8({ HLC(utf8: $0) }) else { return nil }
        self = hlc
    }

    /// Parses the wire form from its UTF-8 bytes (a page reader's, without making a string first).
    init?(utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 17, utf8[12] == UInt8(ascii: "-"),
            let ms = Self.parseHex(utf8[0..<12]), let counter = Self.parseHex(utf8[13..<17])
        else { return nil }
        self.init(milliseconds: ms, counter: UInt16(counter))
    }

    private static func hex(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func parseHex(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> UInt64? {
        var value: UInt64 = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }
}

extension HLC: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = HLC(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "invalid HLC '\(text)': expected 12 hex digits, '-', 4 hex digits")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
