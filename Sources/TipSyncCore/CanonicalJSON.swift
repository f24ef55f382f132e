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
        if number == number.rounded(), abs(number) < 1e15 {
            write(Int64(number))  // integral: written as an integer, equal as a number
        } else {
            bytes.append(contentsOf: "\(number)".utf8)
        }
    }

    /// A string, quoted: `"` and `\` escaped, control characters as `\n` `\r` `\t` or `\u00XX`;
    /// everything else (including non-ASCII) as its UTF-8 bytes.
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

    /// An object member: `,` unless it is the first, the quoted key and `:`. Callers write members in
    /// ascending key order (checked in debug builds).
    mutating func key(_ name: StaticString, after previous: inout StaticString?) {
        if let before = previous {
            assert(
                before.withUTF8Buffer { old in name.withUTF8Buffer { old.lexicographicallyPrecedes($0) } },
                "canonical JSON keys out of order: \(before) before \(name)")
            bytes.append(UInt8(ascii: ","))
        }
        previous = name
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }
}

extension Change {
    /// The change as canonical JSON: the same fields as its `Codable` form, keys sorted.
    public var canonicalJSON: String {
        var writer = CanonicalJSON(capacity: 192)
        var last: StaticString? = nil
        writer.raw("{")
        // Each kind's members, in ascending key order: count date device duration epoch event hlc id
        // info kind lastDisplayed reason seq state tip value.
        func device() {
            writer.key("device", after: &last)
            writer.write(self.device)
        }
        func hlc() {
            writer.key("hlc", after: &last)
            writer.write(self.hlc.description)
        }
        func kind() {
            writer.key("kind", after: &last)
            writer.write(self.kind.rawValue)
        }
        func seq() {
            writer.key("seq", after: &last)
            writer.write(self.seq)
        }
        switch operation {
        case .parameter(let id, let value):
            device()
            hlc()
            writer.key("id", after: &last)
            writer.write(id)
            kind()
            seq()
            writer.key("value", after: &last)
            writer.write(value)
        case .eligibility(let tip, let state):
            device()
            hlc()
            kind()
            if case .invalidated(let reason) = state {
                writer.key("reason", after: &last)
                writer.write(reason.rawValue)
            }
            seq()
            writer.key("state", after: &last)
            switch state {
            case .eligible: writer.write("eligible")
            case .invalidated: writer.write("invalidated")
            }
            writer.key("tip", after: &last)
            writer.write(tip)
        case .display(let tip, let epoch, let count, let duration, let lastDisplayed):
            writer.key("count", after: &last)
            writer.write(count)
            device()
            writer.key("duration", after: &last)
            writer.write(duration)
            if let epoch {
                writer.key("epoch", after: &last)
                writer.raw("{\"device\":")
                writer.write(epoch.device)
                writer.raw(",\"hlc\":")
                writer.write(epoch.hlc.description)
                writer.raw("}")
            }
            hlc()
            kind()
            writer.key("lastDisplayed", after: &last)
            writer.write(lastDisplayed)
            seq()
            writer.key("tip", after: &last)
            writer.write(tip)
        case .donation(let event, let id, let date, let info):
            writer.key("date", after: &last)
            writer.write(date)
            device()
            writer.key("event", after: &last)
            writer.write(event)
            hlc()
            writer.key("id", after: &last)
            writer.write(id)
            if let info {
                writer.key("info", after: &last)
                writer.write(info)
            }
            kind()
            seq()
        case .donationsDeleted(let event):
            device()
            writer.key("event", after: &last)
            writer.write(event)
            hlc()
            kind()
            seq()
        case .datastoreReset:
            device()
            hlc()
            kind()
            seq()
        }
        writer.raw("}")
        return writer.text
    }
}
