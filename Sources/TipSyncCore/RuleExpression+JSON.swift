/// The JSON form of rule expressions (see ``RuleExpression``'s cases for each operator).
extension RuleExpression: Codable {
    /// Why a JSON rule expression could not be read.
    public struct FormatError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        do {
            self = try RuleExpression(json: json)
        } catch let error as FormatError {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    /// A literal's value, its numbers in canonical form; a number outside the protocol's number model
    /// (section 1: `9007199254740993`) refuses the rule, as it refuses a change.
    static func literal(_ value: JSONValue) throws -> JSONValue {
        if let violation = value.numberViolation(at: "literal") {
            throw FormatError(description: "\(violation.field): \(violation.message)")
        }
        return value.canonicalNumbers
    }

    /// Reads the JSON form.
    public init(json: JSONValue) throws {
        guard case .object(let members) = json else {
            if case .array = json {
                throw FormatError(description: "a bare array is not a rule expression; wrap it in {\"literal\": […]}")
            }
            self = try .literal(Self.literal(json))
            return
        }
        guard members.count == 1, let (op, argument) = members.first else {
            throw FormatError(
                description:
                    "a rule expression object must have exactly one key (the operator), got \(members.keys.sorted())")
        }
        func operands(_ count: Int) throws -> [JSONValue] {
            guard case .array(let items) = argument, items.count == count else {
                throw FormatError(description: "'\(op)' takes an array of \(count) operands")
            }
            return items
        }
        func string(_ value: JSONValue) throws -> String {
            guard case .string(let text) = value else { throw FormatError(description: "'\(op)' needs a string") }
            return text
        }
        if let comparison = Comparison(rawValue: op) {
            let items = try operands(2)
            self = .compare(comparison, try RuleExpression(json: items[0]), try RuleExpression(json: items[1]))
            return
        }
        if let arithmetic = Arithmetic(rawValue: op) {
            let items = try operands(2)
            self = .arithmetic(arithmetic, try RuleExpression(json: items[0]), try RuleExpression(json: items[1]))
            return
        }
        switch op {
        case "literal": self = try .literal(Self.literal(argument))
        case "param": self = .parameter(try string(argument))
        case "donations": self = .donations(try string(argument))
        case "field": self = .field(try string(argument))
        case "now":
            guard argument == .bool(true) else { throw FormatError(description: "'now' takes true: {\"now\": true}") }
            self = .now
        case "not": self = .not(try RuleExpression(json: argument))
        case "and", "or":
            guard case .array(let items) = argument else { throw FormatError(description: "'\(op)' takes an array") }
            let parts = try items.map(RuleExpression.init(json:))
            self = op == "and" ? .and(parts) : .or(parts)
        case "count": self = .count(try RuleExpression(json: argument))
        case "filter", "contains":
            let items = try operands(2)
            let list = try RuleExpression(json: items[0])
            let predicate = try RuleExpression(json: items[1])
            self = op == "filter" ? .filter(list, predicate) : .contains(list, predicate)
        case "donatedWithin":
            let items = try operands(2)
            self = .donatedWithin(try RuleExpression(json: items[0]), seconds: try Self.seconds(items[1]))
        case "largestSubset", "smallestSubset":
            let items = try operands(2)
            let list = try RuleExpression(json: items[0])
            let field = try string(items[1])
            self = op == "largestSubset" ? .largestSubset(list, field: field) : .smallestSubset(list, field: field)
        case "context": self = .context(try string(argument))
        case "bucket": self = .bucket(try string(argument))
        case "compareVersions":
            let items = try operands(2)
            self = .compareVersions(try RuleExpression(json: items[0]), try RuleExpression(json: items[1]))
        default:
            throw FormatError(description: "unknown rule operator '\(op)'")
        }
    }

    private static let units: [String: Double] = ["minute": 60, "hour": 3600, "day": 86_400, "week": 604_800]

    /// A `donatedWithin` window: a number of seconds, a unit name, or `{"<unit>s": n}`; finite and not negative.
    private static func seconds(_ json: JSONValue) throws -> Double {
        var seconds: Double?
        if let number = json.number {
            seconds = number
        } else if case .string(let unit) = json {
            seconds = units[unit]
        } else if case .object(let members) = json, members.count == 1, let (key, value) = members.first,
            key.hasSuffix("s"), let unit = units[String(key.dropLast())], let count = value.number
        {
            seconds = unit * count
        }
        guard let seconds, seconds.isFinite, seconds >= 0 else {
            throw FormatError(
                description:
                    "donatedWithin's window is a number of seconds (0 or more), \"minute\", \"hour\", \"day\", \"week\", "
                    + "or one of {\"minutes\": n}, {\"hours\": n}, {\"days\": n}, {\"weeks\": n}; got \(json.canonicalText)"
            )
        }
        return seconds
    }

    /// The JSON form.
    public var json: JSONValue {
        switch self {
        case .literal(let value):
            switch value {
            case .array, .object: return .object(["literal": value])
            default: return value
            }
        case .parameter(let id): return .object(["param": .string(id)])
        case .donations(let id): return .object(["donations": .string(id)])
        case .field(let name): return .object(["field": .string(name)])
        case .now: return .object(["now": .bool(true)])
        case .not(let e): return .object(["not": e.json])
        case .and(let es): return .object(["and": .array(es.map(\.json))])
        case .or(let es): return .object(["or": .array(es.map(\.json))])
        case .compare(let op, let a, let b): return .object([op.rawValue: .array([a.json, b.json])])
        case .arithmetic(let op, let a, let b): return .object([op.rawValue: .array([a.json, b.json])])
        case .count(let e): return .object(["count": e.json])
        case .filter(let a, let b): return .object(["filter": .array([a.json, b.json])])
        case .contains(let a, let b): return .object(["contains": .array([a.json, b.json])])
        case .donatedWithin(let e, let seconds): return .object(["donatedWithin": .array([e.json, .double(seconds)])])
        case .largestSubset(let e, let field): return .object(["largestSubset": .array([e.json, .string(field)])])
        case .smallestSubset(let e, let field): return .object(["smallestSubset": .array([e.json, .string(field)])])
        case .context(let name): return .object(["context": .string(name)])
        case .bucket(let key): return .object(["bucket": .string(key)])
        case .compareVersions(let a, let b): return .object(["compareVersions": .array([a.json, b.json])])
        }
    }
}
