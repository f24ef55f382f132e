/// The device's context as clients report it to the server (protocol.md §5, header `TipSync-Context`):
/// `platform=ios; appVersion=2.4.1; locale=fr-CA`. The server keeps the latest per device so its
/// console can say what each device of an account shows and why (issue 73, item 4); it never
/// changes what a device evaluates. Each value is percent-encoded (RFC 3986's unreserved characters
/// kept), at most ``maximumValueBytes`` bytes once decoded; the account is not sent (the server
/// knows it from the credential).
extension DeviceContext {
    /// The header's name.
    public static let headerName = "TipSync-Context"
    /// The longest value the server keeps (longer ones are dropped).
    public static let maximumValueBytes = 64

    /// The header's value, `nil` when the device knows none of platform, app version and locale.
    public var headerValue: String? {
        let pairs = [("platform", platform), ("appVersion", appVersion), ("locale", locale)].compactMap { name, value in
            value.map { "\(name)=\(Self.percentEncoded($0))" }
        }
        return pairs.isEmpty ? nil : pairs.joined(separator: "; ")
    }

    /// The context a header's value reports (`account` unset): unknown keys, malformed pairs and
    /// values longer than ``maximumValueBytes`` are ignored; `nil` when nothing is left.
    public init?(headerValue: String) {
        self.init()
        for pair in headerValue.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Self.percentDecoded(parts[1].trimmingSpaces),
                !value.isEmpty, value.utf8.count <= Self.maximumValueBytes
            else { continue }
            switch parts[0].trimmingSpaces {
            case "platform": platform = value
            case "appVersion": appVersion = value
            case "locale": locale = value
            default: continue
            }
        }
        if platform == nil, appVersion == nil, locale == nil { return nil }
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let scalar = Unicode.Scalar(byte)
            if (byte < 0x80) && (scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)))
                || "-._~".utf8.contains(byte)
            {
                out.unicodeScalars.append(scalar)
            } else {
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue)
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
