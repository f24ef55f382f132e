/// A document whose `changes` member is an array of changes: a pull page, a live stream's page, a
/// push body. ``JSONCoding/decode(_:from:)`` reads such documents with ``ChangeReader``.
public protocol ChangePage: Decodable {
    var changes: [Change] { get set }
}

extension PullResponse: ChangePage {}
extension PushRequest: ChangePage {}

/// Reads a ``ChangePage`` without building a JSON object (a dictionary of members) per change: each
/// change object's members go into one slot per member name a change may have, and
/// ``Change/init(fields:)`` — the one place the change format's decoding rules live — reads them
/// from there. A cold start decodes 100,000 changes, and the dictionaries cost most of it.
///
/// It only ever *accepts*: anything it does not read in the common form (an unknown or repeated
/// member name, malformed text, a value the change format refuses) makes it give up, and the
/// document is decoded again by ``JSONParser`` and ``JSONValueDecoder``, which decide — with their
/// errors and coding paths. A change with members a change does not define (a newer client's) is
/// read through the general path alone. So what it returns is what the general path returns.
enum ChangeReader {
    /// The page, or nil when the general path must decide.
    static func page<Page: ChangePage>(_ type: Page.Type, from bytes: UnsafeBufferPointer<UInt8>) -> Page? {
        var parser = JSONParser(bytes: bytes)
        guard let (read, changes) = try? topLevel(&parser), read["changes"] == nil else { return nil }
        var members = read
        members["changes"] = .array([])
        guard var page = try? JSONValueDecoder().decode(Page.self, from: .object(members)) else { return nil }
        page.changes = changes
        return page
    }

    /// The top-level object: its `changes` read as changes, its other members as values.
    private static func topLevel(_ parser: inout JSONParser) throws -> (members: [String: JSONValue], [Change]) {
        parser.skipWhitespace()
        try parser.consume(UInt8(ascii: "{"))
        var members: [String: JSONValue] = [:]
        var changes: [Change]?
        parser.skipWhitespace()
        if !parser.consumeIf(UInt8(ascii: "}")) {
            repeat {
                parser.skipWhitespace()
                guard parser.peek == UInt8(ascii: "\"") else { throw parser.error("expected a member name") }
                let key = try parser.string()
                parser.skipWhitespace()
                try parser.consume(UInt8(ascii: ":"))
                parser.skipWhitespace()
                if key.utf8.elementsEqual("changes".utf8) {
                    guard changes == nil else { throw parser.error("repeated") }
                    changes = try changeArray(&parser)
                } else {
                    guard members.index(forKey: key) == nil else { throw parser.error("repeated") }
                    members[key] = try parser.value(depth: 1)
                }
                parser.skipWhitespace()
            } while parser.consumeIf(UInt8(ascii: ","))
            try parser.consume(UInt8(ascii: "}"))
        }
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count, let changes else { throw parser.error("not a page") }
        return (members, changes)
    }

    private static func changeArray(_ parser: inout JSONParser) throws -> [Change] {
        try parser.consume(UInt8(ascii: "["))
        var changes: [Change] = []
        var slots = [JSONValue?](repeating: nil, count: Change.CodingKeys.allCases.count)
        parser.skipWhitespace()
        if parser.consumeIf(UInt8(ascii: "]")) { return changes }
        repeat {
            parser.skipWhitespace()
            let start = parser.index
            if let change = try? change(&parser, slots: &slots) {
                changes.append(change)
            } else {
                // Members a change does not define, or a refusal: the general path reads this one
                // (and a refusal makes the whole page go the general way, for its error).
                parser.index = start
                changes.append(try Change(json: try parser.value(depth: 2), codingPath: []))
            }
            parser.skipWhitespace()
        } while parser.consumeIf(UInt8(ascii: ","))
        try parser.consume(UInt8(ascii: "]"))
        return changes
    }

    /// One change object whose member names are all ``Change/CodingKeys``, each at most once.
    /// `hlc` and `kind` are read straight from their bytes when they are in the form the change
    /// format allows (no string is made for them); otherwise as values, for ``Change/init(fields:)``
    /// to decide.
    private static func change(_ parser: inout JSONParser, slots: inout [JSONValue?]) throws -> Change {
        slots.withUnsafeMutableBufferPointer { slots in
            for index in slots.indices { slots[index] = nil }
        }
        var readHLC: HLC?
        var readKind: Change.Kind?
        try parser.consume(UInt8(ascii: "{"))
        parser.skipWhitespace()
        if !parser.consumeIf(UInt8(ascii: "}")) {
            repeat {
                parser.skipWhitespace()
                guard let slot = parser.memberSlot(), slots[slot] == nil else { throw parser.error("not read here") }
                parser.skipWhitespace()
                try parser.consume(UInt8(ascii: ":"))
                parser.skipWhitespace()
                if slot == Self.hlcSlot, let hlc = parser.hlcString() {
                    readHLC = hlc
                    slots[slot] = .null
                } else if slot == Self.kindSlot, let kind = parser.kindString() {
                    readKind = kind
                    slots[slot] = .null
                } else {
                    slots[slot] = try parser.value(depth: 3)
                }
                parser.skipWhitespace()
            } while parser.consumeIf(UInt8(ascii: ","))
            try parser.consume(UInt8(ascii: "}"))
        }
        return try Change(
            fields: ChangeFields(members: .slots(slots), codingPath: [], readHLC: readHLC, readKind: readKind))
    }

    private static let hlcSlot = Change.CodingKeys.hlc.slot
    private static let kindSlot = Change.CodingKeys.kind.slot
}

extension JSONParser {
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func consume(_ byte: UInt8) throws {
        guard consumeIf(byte) else { throw error("expected '\(Character(Unicode.Scalar(byte)))'") }
    }

    mutating func consumeIf(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// The slot of the member name at `index` when it is exactly one of ``Change/CodingKeys``
    /// (written without escapes), past its closing quote; nil, not moving, otherwise.
    mutating func memberSlot() -> Int? {
        guard peek == UInt8(ascii: "\"") else { return nil }
        var end = index + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
            guard bytes[end] != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        guard end < bytes.count else { return nil }
        let name = UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end])
        guard let first = name.first, let last = name.last else { return nil }
        for (slot, candidate) in Self.changeMemberNames.enumerated()
        where candidate.count == name.count && candidate[0] == first && candidate[candidate.count - 1] == last
            && Self.bytes(name, equal: candidate)
        {
            index = end + 1
            return slot
        }
        return nil
    }

    /// A string at `index` that is an HLC's wire form, past its closing quote; nil, not moving,
    /// otherwise.
    mutating func hlcString() -> HLC? {
        let end = index + 18  // the closing quote
        guard end < bytes.count, bytes[index] == UInt8(ascii: "\""), bytes[end] == UInt8(ascii: "\""),
            let hlc = HLC(utf8: UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end]))
        else { return nil }
        index = end + 1
        return hlc
    }

    /// A string at `index` that is exactly a change kind's name (no escapes), past its closing
    /// quote; nil, not moving, otherwise.
    mutating func kindString() -> Change.Kind? {
        guard peek == UInt8(ascii: "\"") else { return nil }
        for (kind, name) in Self.kindNames {
            let end = index + 1 + name.count
            guard end < bytes.count, bytes[end] == UInt8(ascii: "\""),
                Self.bytes(UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end]), equal: name)
            else { continue }
            index = end + 1
            return kind
        }
        return nil
    }

    /// Whether the bytes are `expected`'s (a plain loop: the generic `elementsEqual` steps through
    /// two iterators, a tenth of a page's decoding).
    @inline(__always)
    static func bytes(_ bytes: UnsafeBufferPointer<UInt8>, equal expected: [UInt8]) -> Bool {
        guard bytes.count == expected.count else { return false }
        return expected.withUnsafeBufferPointer { expected in
            for offset in 0..<expected.count where bytes[offset] != expected[offset] { return false }
            return true
        }
    }

    /// ``Change/Kind``'s names as bytes.
    static let kindNames: [(Change.Kind, [UInt8])] = Change.Kind.allCases.map { ($0, Array($0.rawValue.utf8)) }

    /// ``Change/CodingKeys``' names as bytes, in slot order.
    static let changeMemberNames: [[UInt8]] = Change.CodingKeys.allCases.map { Array($0.stringValue.utf8) }
}
