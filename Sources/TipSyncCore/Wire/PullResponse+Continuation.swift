extension PullResponse {
    /// Where a page continues — its `cursor` and whether there is `more` — read without decoding its
    /// changes, so a client can request the next page while it decodes this one. Nil when the bytes
    /// are not an object with a string `cursor` and a boolean `more` (the page's decode then
    /// decides). A hint: the client still checks it against the decoded page. Stops at the second of
    /// the two, so a page that sends them first (as this server does) is not scanned further.
    public static func continuation(of bytes: some Collection<UInt8>) -> (cursor: String, more: Bool)? {
        // Read in place when the bytes are contiguous (a page is hundreds of kilobytes).
        if let found = bytes.withContiguousStorageIfAvailable({ continuation(in: $0) }) { return found }
        return Array(bytes).withUnsafeBufferPointer { continuation(in: $0) }
    }

    private static func continuation(in buffer: UnsafeBufferPointer<UInt8>) -> (cursor: String, more: Bool)? {
        var parser = JSONParser(bytes: buffer)
        var cursor: String?
        var more: Bool?
        parser.skipWhitespace()
        guard parser.consumeIf(UInt8(ascii: "{")) else { return nil }
        repeat {
            parser.skipWhitespace()
            guard parser.peek == UInt8(ascii: "\""), let key = try? parser.string() else { return nil }
            parser.skipWhitespace()
            guard parser.consumeIf(UInt8(ascii: ":")) else { return nil }
            parser.skipWhitespace()
            switch key {
            case "cursor":
                guard case .string(let text)? = try? parser.value(depth: 1) else { return nil }
                cursor = text
            case "more":
                guard case .bool(let flag)? = try? parser.value(depth: 1) else { return nil }
                more = flag
            default:
                guard parser.skipValue() else { return nil }
            }
            // Found both: the rest (this server sends them before the changes) need not be scanned.
            if let cursor, let more { return (cursor, more) }
            parser.skipWhitespace()
        } while parser.consumeIf(UInt8(ascii: ","))
        guard let cursor, let more else { return nil }
        return (cursor, more)
    }
}

extension JSONParser {
    /// Moves past one value without building it (strings are scanned, not decoded); false when the
    /// text is not a value. Checks only what finding its end needs.
    mutating func skipValue() -> Bool {
        var depth = 0
        repeat {
            skipWhitespace()
            guard let byte = peek else { return false }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
                continue
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { return false }
                depth -= 1
                index += 1
            case UInt8(ascii: "\""):
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < bytes.count else { return false }
                index += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                guard depth > 0 else { return false }
                index += 1
                continue
            default:
                // A number or a literal: up to the next delimiter.
                let start = index
                scan: while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: break scan
                    default: index += 1
                    }
                }
                guard index > start else { return false }
            }
        } while depth > 0
        return true
    }
}
