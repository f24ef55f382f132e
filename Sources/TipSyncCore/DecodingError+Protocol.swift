/// `DecodingError`s told in protocol terms: where (`tips[0].rules[1]`) and what, never Swift types.
/// The server's 4xx messages and the agent's catalog errors both read them this way.
extension DecodingError {
    /// The field the error is about, as a protocol path (`changes[3].seq`); empty for the whole document.
    public var fieldPath: String {
        let keys: [any CodingKey]
        switch self {
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
            keys = context.codingPath
        case .keyNotFound(let key, let context):
            keys = context.codingPath + [key]
        @unknown default:
            keys = []
        }
        return Self.fieldPath(keys)
    }

    /// What is wrong with that field. ``JSONValueDecoder``'s descriptions speak JSON ("expected a
    /// string, found a number") and the model types' own checks name the offending value.
    public var reason: String {
        switch self {
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
            context.debugDescription
        case .keyNotFound:
            "missing"
        @unknown default:
            "not valid"
        }
    }

    /// `[tips, 0, rules]` → `tips[0].rules`.
    public static func fieldPath(_ keys: [any CodingKey]) -> String {
        var path = ""
        for key in keys {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return path
    }
}
