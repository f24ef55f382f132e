/// A change object's members as ``Change/init(fields:)`` reads them: the same values and the same
/// errors (with coding paths) as a keyed container, without building a decoder and a coding path for
/// every field. The members come from a parsed JSON object (any input), or from the slots
/// ``ChangeReader`` filled while reading a page (no dictionary per change).
struct ChangeFields {
    typealias Key = Change.CodingKeys

    enum Members {
        /// Any object, as parsed.
        case object([String: JSONValue])
        /// One slot per ``Change/CodingKeys`` case, in `allCases` order; no other member exists.
        case slots([JSONValue?])
    }

    let members: Members
    let codingPath: [any CodingKey]
    /// `hlc` and `kind` as ``ChangeReader`` read them straight from a page's bytes (their slots
    /// then hold a placeholder); nil: read from ``members`` as any other field.
    var readHLC: HLC? = nil
    var readKind: Change.Kind? = nil

    /// The member named `key`, if present.
    func member(_ key: Key) -> JSONValue? {
        switch members {
        case .object(let members): members[key.stringValue]
        case .slots(let slots): slots[key.slot]
        }
    }

    /// The members a change of `kind` does not define (kept in ``Change/unknownFields``).
    func unknownMembers(of kind: Change.Kind) -> [String: JSONValue] {
        switch members {
        case .object(let members):
            return members.filter { !Change.isField($0.key, of: kind) }
        case .slots(let slots):
            var found: [String: JSONValue] = [:]
            for key in Key.allCases where !Change.isField(key, of: kind) {
                if let value = slots[key.slot] { found[key.stringValue] = value }
            }
            return found
        }
    }

    func value(_ key: Key) throws -> JSONValue {
        guard let value = member(key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "no value for key '\(key.stringValue)'"))
        }
        return value
    }

    func string(_ key: Key) throws -> String {
        let value = try value(key)
        if case .string(let text) = value { return text }
        return try decoder(value, key).decodeValue(String.self)
    }

    func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        let value = try value(key)
        if case .int(let number) = value, let exact = T(exactly: number) { return exact }
        return try decoder(value, key).integer(T.self)
    }

    func hlc(_ key: Key) throws -> HLC {
        if key == .hlc, let readHLC { return readHLC }
        let value = try value(key)
        if case .string(let text) = value, let hlc = HLC(text) { return hlc }
        return try decoder(value, key).decodeValue(HLC.self)
    }

    func decode<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        try decoder(try value(key), key).decodeValue(T.self)
    }

    /// The error for a present value of the right JSON type that the model refuses.
    func corrupted(_ key: Key, _ description: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: description))
    }

    private func decoder(_ value: JSONValue, _ key: Key) -> ValueDecoder {
        ValueDecoder(value: value, codingPath: codingPath + [key])
    }
}

extension Change.CodingKeys {
    /// This name's index in `allCases`: its slot in ``ChangeFields/Members/slots(_:)``.
    var slot: Int {
        switch self {
        case .device: 0
        case .seq: 1
        case .hlc: 2
        case .kind: 3
        case .id: 4
        case .value: 5
        case .tip: 6
        case .state: 7
        case .reason: 8
        case .epoch: 9
        case .count: 10
        case .duration: 11
        case .lastDisplayed: 12
        case .event: 13
        case .date: 14
        case .info: 15
        }
    }
}
