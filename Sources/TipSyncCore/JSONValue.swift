public import Foundation

/// A JSON value: what parameters hold, what donation payloads carry, and what rule literals are.
///
/// Integers and floating-point numbers are kept as parsed, but compare (and hash) as numbers:
/// `.int(8) == .double(8)`, as JSON itself does not distinguish `8` from `8.0`.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value as a `Double` when it is a number.
    public var number: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.int, .double), (.double, .int), (.double, .double): lhs.number == rhs.number
        // Code points, never canonical equivalence (Swift's String ==): what every other language does.
        case (.string(let a), .string(let b)): a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): Self.sameMembers(a, b)
        default: false
        }
    }

    /// Objects are equal when they have the same member names, compared by code point like every
    /// string (Swift's dictionary would match canonically equivalent names), and equal members.
    private static func sameMembers(_ a: [String: JSONValue], _ b: [String: JSONValue]) -> Bool {
        guard a.count == b.count else { return false }
        for (key, value) in a {
            guard let index = b.index(forKey: key), b[index].key.unicodeScalars.elementsEqual(key.unicodeScalars),
                b[index].value == value
            else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .int, .double: hasher.combine(number!)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        }
    }

    /// The value's JSON type for messages, with its article: "null", "a number", "an object".
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Member `key` of an object, or `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        // Decoding from a parsed value (``JSONCoding/decode(_:from:)``): take it as is.
        if let parsed = decoder as? ValueDecoder {
            self = parsed.value
            return
        }
        // Other decoders cannot be asked for a value's type, so each kind is tried in turn; the order puts
        // what payloads hold most (objects, strings, integers) first, since every miss costs an error.
        if let members = try? decoder.container(keyedBy: AnyKey.self) {
            var object: [String: JSONValue] = [:]
            for key in members.allKeys { object[key.stringValue] = try members.decode(JSONValue.self, forKey: key) }
            self = .object(object)
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue {
    /// Encodes any `Encodable` Swift value into its JSON form.
    public init(encoding value: some Encodable) throws {
        if let json = value as? JSONValue {
            self = json
            return
        }
        let data = try JSONCoding.encoder.encode(value)
        self = try JSONCoding.decoder.decode(JSONValue.self, from: data)
    }

    /// Decodes this JSON into a Swift value.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        if let value = self as? T { return value }
        return try JSONValueDecoder().decode(T.self, from: self)
    }

    /// Canonical JSON text: sorted keys, no whitespace. Equal values give identical bytes.
    public var canonicalText: String { CanonicalJSON.text(of: self) }

    /// Writes ``canonicalText``'s bytes at the end of `bytes`, without making a string.
    public func appendCanonicalText(to bytes: inout [UInt8]) {
        CanonicalJSON.append(self, to: &bytes)
    }

    /// Parses JSON text.
    public init(parsing text: String) throws {
        self = try JSONParser.parse(text.utf8)
    }
}

/// The one JSON configuration TipSync uses everywhere: sorted keys so output is canonical.
public enum JSONCoding {
    /// Shared: configuring an encoder costs more than encoding a small change. Never reconfigure it.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    public static let decoder = JSONDecoder()

    /// Decodes JSON bytes with ``JSONParser`` and ``JSONValueDecoder``: the fast path every hot
    /// decode (pushes, pulls, change logs, catalogs) takes. Malformed JSON throws
    /// ``JSONParser/Error``; a wrong shape throws `DecodingError`.
    public static func decode<T: Decodable>(_ type: T.Type, from data: some Collection<UInt8>) throws -> T {
        try JSONValueDecoder().decode(type, from: try JSONParser.parse(data))
    }

    /// A pull or live page or a push body: read by ``ChangeReader`` (no JSON object per change), or —
    /// when it is not in the form that reader takes — exactly as any other type.
    public static func decode<T: ChangePage>(_ type: T.Type, from data: some Collection<UInt8>) throws -> T {
        let bytes = Array(data)
        if let page = bytes.withUnsafeBufferPointer({ ChangeReader.page(type, from: $0) }) { return page }
        return try JSONValueDecoder().decode(type, from: try JSONParser.parse(bytes))
    }
}
