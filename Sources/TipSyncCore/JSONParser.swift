/// A strict JSON (RFC 8259) parser straight to ``JSONValue``. `Codable`'s `JSONDecoder` can only
/// decode a ``JSONValue`` by trying each kind in turn, paying an error for every miss; this reads
/// each value once. Integers that fit `Int64` become `.int`, every other number `.double`.
public struct JSONParser {
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        /// Byte offset of the problem.
        public var offset: Int
        /// Where the problem is, in protocol terms (`changes[0].value`; empty: the top-level value).
        public var path: String { Self.render(components.reversed()) }
        /// Whether the text is JSON but an object in it has two members whose names are equal or
        /// canonically equivalent (`protocol.md` §1): a refused value, not malformed text.
        public var isDuplicateMemberName: Bool
        /// Whether the text is JSON but a number in it is too large for any finite binary64
        /// (`protocol.md` §1): it cannot be read, and the message names where it is, not only the byte.
        public var isNumberOutOfRange = false
        /// Path components, innermost first (each enclosing value adds one as the error leaves it).
        var components: [Component] = []

        enum Component: Hashable, Sendable {
            case member(String)
            case element(Int)
        }

        init(message: String, offset: Int, isDuplicateMemberName: Bool = false) {
            self.message = message
            self.offset = offset
            self.isDuplicateMemberName = isDuplicateMemberName
        }

        public var description: String {
            if isDuplicateMemberName { return "\(path.isEmpty ? "the top-level object" : path): \(message)" }
            if isNumberOutOfRange {
                return "\(path.isEmpty ? "the top-level value" : path): a number too large for any finite binary64 "
                    + "(protocol.md §1), at byte \(offset)"
            }
            return "malformed JSON at byte \(offset): \(message)"
        }

        static func render(_ components: some Sequence<Component>) -> String {
            var path = ""
            for component in components {
                switch component {
                case .member(let name): path += path.isEmpty ? name : ".\(name)"
                case .element(let index): path += "[\(index)]"
                }
            }
            return path
        }
    }

    /// Deepest nesting accepted (deeper input is refused, not a stack overflow).
    public static let maximumDepth = 512

    public static func parse(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer)
            parser.skipWhitespace()
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.error("unexpected text after the value") }
            return value
        }
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    func error(_ message: String) -> Error { Error(message: message, offset: index) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func expect(_ literal: StaticString, _ value: JSONValue) throws -> JSONValue {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of input") }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        guard matches else { throw error("invalid literal") }
        index += count
        return value
    }

    mutating func value(depth: Int) throws -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("nested too deeply") }
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character")
        }
    }

    mutating func object(depth: Int) throws -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let member: JSONValue
            do {
                member = try value(depth: depth + 1)
            } catch var error as Error {
                error.components.append(.member(key))
                throw error
            }
            if let existing = members.index(forKey: key) {
                throw duplicate(members[existing].key, key)
            }
            members[key] = member
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw error("expected ',' or '}'")
            }
        }
    }

    /// Two members of one object named alike: the same name twice (which member counts differs between
    /// JSON implementations), or two canonically equivalent spellings (one member on platforms whose
    /// strings compare canonically, such as Swift's, two on others). Refused either way, never merged.
    func duplicate(_ first: String, _ second: String) -> Error {
        let message =
            first.unicodeScalars.elementsEqual(second.unicodeScalars)
            ? "two members are named \(Self.quoted(first)); member names within an object must differ"
            : "member names \(Self.quoted(first)) and \(Self.quoted(second)) are canonically equivalent "
                + "(Unicode); member names within an object must differ after NFC normalization"
        return Error(message: message, offset: index, isDuplicateMemberName: true)
    }

    /// A name for a message: quoted, with every scalar outside printable ASCII as `\u{…}` so that
    /// two spellings of one letter read differently.
    static func quoted(_ name: String) -> String {
        var text = "'"
        for scalar in name.unicodeScalars {
            if scalar.isASCII, scalar.value >= 0x20 {
                text.unicodeScalars.append(scalar)
            } else {
                text += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return text + "'"
    }

    mutating func array(depth: Int) throws -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            do {
                elements.append(try value(depth: depth + 1))
            } catch var error as Error {
                error.components.append(.element(elements.count))
                throw error
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw error("expected ',' or ']'")
            }
        }
    }

    mutating func string() throws -> String {
        index += 1  // opening quote
        let start = index
        var isASCII = true
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                let text = try utf8String(raw, isASCII: isASCII)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in a string") }
            if byte >= 0x80 { isASCII = false }
            index += 1
        }
        var scalars = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try scalars.withUnsafeBufferPointer { try utf8String($0, isASCII: isASCII) }
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("unexpected end of input") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append(0x22)
                case UInt8(ascii: "\\"): scalars.append(0x5C)
                case UInt8(ascii: "/"): scalars.append(0x2F)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw error("unpaired surrogate") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw error("unpaired surrogate")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw error("invalid escape")
                }
            default:
                if byte < 0x20 { throw error("control character in a string") }
                if byte >= 0x80 { isASCII = false }
                scalars.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    /// The string those bytes encode; invalid UTF-8 is refused (never repaired into U+FFFD).
    func utf8String(_ raw: UnsafeBufferPointer<UInt8>, isASCII: Bool) throws -> String {
        let text = String(decoding: raw, as: UTF8.self)
        // Decoding changes the bytes exactly when it had to replace an invalid sequence.
        guard isASCII || text.utf8.elementsEqual(raw) else { throw error("invalid UTF-8 in a string") }
        return text
    }

    mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("unexpected end of input") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            code = code << 4 | digit
            index += 1
        }
        return code
    }

    mutating func number() throws -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else {
            throw error("invalid number")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let digits = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digits else { throw error("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            let digits = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digits else { throw error("invalid number") }
        }
        let negative = bytes[start] == UInt8(ascii: "-")
        let digits = (negative ? start + 1 : start)..<index
        // Up to 18 digits always fit an Int64: summed straight from the bytes, no text.
        if isInteger, digits.count <= 18 {
            var magnitude: Int64 = 0
            for position in digits { magnitude = magnitude * 10 + Int64(bytes[position] &- UInt8(ascii: "0")) }
            return .int(negative ? -magnitude : magnitude)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else {
            var outOfRange = error("number out of range")
            outOfRange.isNumberOutOfRange = true
            throw outOfRange
        }
        return .double(value)
    }
}
