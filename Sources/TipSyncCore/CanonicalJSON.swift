/// A fast writer of canonical JSON (object keys sorted by their UTF-8 bytes, no whitespace, only the
/// escapes JSON requires) for the hot paths: every stored change-log entry and server log row.
/// `JSONEncoder` produces equivalent JSON but costs several times more per change.
///
/// It writes bytes; ``text`` turns them into a `String` once at the end.
struct CanonicalJSON {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
    }

    /// What was written, as a string.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    static func text(of value: JSONValue) -> String {
        var writer = CanonicalJSON()
        writer.write(value)
        return writer.text
    }

    /// Writes `value`'s canonical text at the end of `bytes`, without making a string of it (a
    /// replica persisting a page writes a payload for each of thousands of donations).
    static func append(_ value: JSONValue, to bytes: inout [UInt8]) {
        var writer = CanonicalJSON(capacity: 0)
        swap(&writer.bytes, &bytes)
        writer.write(value)
        swap(&writer.bytes, &bytes)
    }

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): raw(flag ? "true" : "false")
        case .int(let number): write(number)
        case .double(let number): write(number)
        case .string(let text): write(text)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members) where members.count == 1:
            // The usual payload (one member): nothing to sort, no list of keys to make.
            let (key, member) = members.first!
            bytes.append(UInt8(ascii: "{"))
            write(key)
            bytes.append(UInt8(ascii: ":"))
            write(member)
            bytes.append(UInt8(ascii: "}"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted(by: Self.utf8Precedes).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(key)
                bytes.append(UInt8(ascii: ":"))
                write(members[key]!)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    static func utf8Precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// Punctuation or a literal, as is.
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ number: Int64) {
        bytes.append(contentsOf: String(number).utf8)
    }

    mutating func write(_ number: Double) {
        guard number.isFinite else {
            raw("null")  // JSON has no infinities or NaN
            return
        }
        if number == number.rounded(), abs(number) <= Double(JSONNumberLimits.maxInteger) {
            write(Int64(number))  // integral (and -0): written as an integer, equal as a number
        } else {
            bytes.append(contentsOf: Self.shortestText(number).utf8)
        }
    }

    /// A finite double as ECMAScript's `Number.prototype.toString` writes it (what `JSON.stringify`
    /// and RFC 8785 use): the shortest digits that read back exactly; plain decimal notation when
    /// 1e-6 ≤ |x| < 1e21 (`0.000001`, `123456789012.5`), else `d.ddde±n` with no exponent padding
    /// (`1e-7`, `1.5e+300`). `protocol.md` §1 defines canonical numbers this way.
    static func shortestText(_ number: Double) -> String {
        // Swift's description has the same shortest, closest digits; only the layout differs.
        let swift = number.magnitude.description  // "1.5e-07", "0.000123", "123.25", "1e+16"
        let parts = swift.split(separator: "e", maxSplits: 1)
        let mantissa = parts[0]
        let exponent = parts.count > 1 ? Int(parts[1])! : 0
        let pointIndex = mantissa.firstIndex(of: ".") ?? mantissa.endIndex
        let integerDigits = mantissa.distance(from: mantissa.startIndex, to: pointIndex)
        var digits = Array(mantissa.filter { $0 != "." })
        // value = 0.d1d2…dk × 10^n
        var n = integerDigits + exponent
        while digits.first == "0" {
            digits.removeFirst()
            n -= 1
        }
        while digits.last == "0" { digits.removeLast() }
        let k = digits.count
        var text = number.sign == .minus ? "-" : ""
        if k <= n, n <= 21 {
            text += String(digits) + String(repeating: "0", count: n - k)
        } else if 0 < n, n <= 21 {
            text += String(digits[..<n]) + "." + String(digits[n...])
        } else if -6 < n, n <= 0 {
            text += "0." + String(repeating: "0", count: -n) + String(digits)
        } else {
            let e = n - 1
            text +=
                String(digits[0]) + (k > 1 ? "." + String(digits[1...]) : "") + (e < 0 ? "e-" : "e+") + String(abs(e))
        }
        return text
    }

    /// A string, quoted as `JSON.stringify` does: `"` and `\` escaped, control characters as `\b`
    /// `\f` `\n` `\r` `\t` or `\u00xx` (lowercase hex); everything else (`/`, non-ASCII) as its
    /// UTF-8 bytes.
    mutating func write(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var plainFrom = 0
            for (index, byte) in utf8.enumerated()
            where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainFrom..<index]))
                plainFrom = index + 1
                switch byte {
                case UInt8(ascii: "\""): raw("\\\"")
                case UInt8(ascii: "\\"): raw("\\\\")
                case UInt8(ascii: "\n"): raw("\\n")
                case UInt8(ascii: "\r"): raw("\\r")
                case UInt8(ascii: "\t"): raw("\\t")
                case 0x08: raw("\\b")
                case 0x0C: raw("\\f")
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    raw("\\u00")
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainFrom...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The key of the last ``member(_:_:)`` written (members of one object, as a change writes them).
    private var previousKey: StaticString?

    /// `"name":` as the next member of the object being written: `,` unless it is the first. Callers
    /// write members in ascending key order (checked in debug builds).
    mutating func key(_ name: StaticString) {
        if let before = previousKey {
            assert(
                before.withUTF8Buffer { old in name.withUTF8Buffer { old.lexicographicallyPrecedes($0) } },
                "canonical JSON keys out of order: \(before) before \(name)")
            bytes.append(UInt8(ascii: ","))
        }
        previousKey = name
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }

    mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        write(value)
    }

    mutating func member(_ name: StaticString, _ value: Int64) {
        key(name)
        write(value)
    }

    mutating func member(_ name: StaticString, _ value: Double) {
        key(name)
        write(value)
    }

    mutating func member(_ name: StaticString, _ value: JSONValue) {
        key(name)
        write(value)
    }
}

extension Change {
    /// The change as canonical JSON: the same fields as its `Codable` form, keys sorted. Each kind
    /// lists its members in ascending key order by hand (faster than sorting; a test checks the bytes
    /// against the generic writer).
    public var canonicalJSON: String {
        let known = knownFieldsJSON
        // A newer client's fields travel on unchanged, merged into the same sorted object.
        guard !unknownFields.isEmpty, case .object(var members)? = try? JSONParser.parse(Array(known.utf8)) else {
            return known
        }
        for (key, value) in unknownFields { members[key] = value }
        return CanonicalJSON.text(of: .object(members))
    }

    private var knownFieldsJSON: String {
        var writer = CanonicalJSON(capacity: 192)
        writer.raw("{")
        switch operation {
        case .parameter(let id, let value):
            writer.member("device", device)
            writer.member("hlc", hlc.description)
            writer.member("id", id)
            writer.member("kind", kind.rawValue)
            writer.member("seq", seq)
            writer.member("value", value)
        case .eligibility(let tip, let state):
            writer.member("device", device)
            writer.member("hlc", hlc.description)
            writer.member("kind", kind.rawValue)
            switch state {
            case .eligible:
                writer.member("seq", seq)
                writer.member("state", "eligible")
            case .invalidated(let reason):
                writer.member("reason", reason.rawValue)
                writer.member("seq", seq)
                writer.member("state", "invalidated")
            }
            writer.member("tip", tip)
        case .display(let tip, let epoch, let count, let duration, let lastDisplayed):
            writer.member("count", count)
            writer.member("device", device)
            writer.member("duration", duration)
            if let epoch {
                writer.key("epoch")
                writer.raw("{\"device\":")
                writer.write(epoch.device)
                writer.raw(",\"hlc\":")
                writer.write(epoch.hlc.description)
                writer.raw("}")
            }
            writer.member("hlc", hlc.description)
            writer.member("kind", kind.rawValue)
            writer.member("lastDisplayed", lastDisplayed)
            writer.member("seq", seq)
            writer.member("tip", tip)
        case .donation(let event, let id, let date, let info):
            writer.member("date", date)
            writer.member("device", device)
            writer.member("event", event)
            writer.member("hlc", hlc.description)
            writer.member("id", id)
            if let info { writer.member("info", info) }
            writer.member("kind", kind.rawValue)
            writer.member("seq", seq)
        case .donationsDeleted(let event):
            writer.member("device", device)
            writer.member("event", event)
            writer.member("hlc", hlc.description)
            writer.member("kind", kind.rawValue)
            writer.member("seq", seq)
        case .datastoreReset:
            writer.member("device", device)
            writer.member("hlc", hlc.description)
            writer.member("kind", kind.rawValue)
            writer.member("seq", seq)
        }
        writer.raw("}")
        return writer.text
    }
}
