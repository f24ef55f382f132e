/// A rule as data: the one form every rule takes, whether written with `#Rule` in Swift or as JSON in
/// a catalog. The JSON form ("rule expressions" in `README.md`) encodes each case as a one-key object.
public indirect enum RuleExpression: Sendable, Hashable {
    /// A constant. JSON: the value itself (`true`, `3`, `"pro"`), or `{"literal": …}` for arrays and objects.
    case literal(JSONValue)
    /// A parameter's current value (its default when never set). JSON: `{"param": "id"}`.
    case parameter(String)
    /// An event's donations visible to rules: the most recent 1000 within its age limit. JSON: `{"donations": "id"}`.
    case donations(String)
    /// A field of the donation under consideration inside `filter`/`contains`; `date` is the donation's
    /// date in seconds since 1970, any other name reads the payload. JSON: `{"field": "name"}`.
    case field(String)
    /// The evaluation instant in seconds since 1970. JSON: `{"now": true}`.
    case now
    /// JSON: `{"not": e}`.
    case not(RuleExpression)
    /// All hold (empty: true). JSON: `{"and": [e, …]}`.
    case and([RuleExpression])
    /// Any holds (empty: false). JSON: `{"or": [e, …]}`.
    case or([RuleExpression])
    /// JSON: `{"==": [a, b]}`, likewise `!=`, `<`, `<=`, `>`, `>=`.
    case compare(Comparison, RuleExpression, RuleExpression)
    /// JSON: `{"+": [a, b]}`, likewise `-`, `*`, `/`.
    case arithmetic(Arithmetic, RuleExpression, RuleExpression)
    /// Number of donations in a list. JSON: `{"count": list}`.
    case count(RuleExpression)
    /// The donations for which the predicate holds. JSON: `{"filter": [list, predicate]}`.
    case filter(RuleExpression, RuleExpression)
    /// Whether any donation satisfies the predicate. JSON: `{"contains": [list, predicate]}`.
    case contains(RuleExpression, RuleExpression)
    /// Donations made within the last `seconds`. JSON: `{"donatedWithin": [list, seconds]}`
    /// (or `{"days": n}`, `{"hours": n}`, `{"minutes": n}`, `{"weeks": n}`, `"day"`, `"hour"`, `"minute"`, `"week"`).
    case donatedWithin(RuleExpression, seconds: Double)
    /// The largest group of donations sharing a payload field's value. JSON: `{"largestSubset": [list, "field"]}`.
    case largestSubset(RuleExpression, field: String)
    /// The smallest such group. JSON: `{"smallestSubset": [list, "field"]}`.
    case smallestSubset(RuleExpression, field: String)
    /// What the device says of itself: `platform`, `appVersion`, `locale`, `language`, `account`
    /// (``DeviceContext``); `null` when unknown. JSON: `{"context": "platform"}`.
    case context(String)
    /// The account's rollout bucket for a key, 0–9999 (``RolloutBucket``); an evaluation error while
    /// the device does not know its account. JSON: `{"bucket": "key"}`.
    case bucket(String)
    /// -1, 0 or 1 as version `a` is before, equal to or after `b` (`2.10` after `2.9`; `2.1` equals
    /// `2.1.0`). JSON: `{"compareVersions": [a, b]}`.
    case compareVersions(RuleExpression, RuleExpression)

    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
    }

    public enum Arithmetic: String, Sendable, Hashable, CaseIterable {
        case add = "+"
        case subtract = "-"
        case multiply = "*"
        case divide = "/"
    }
}

extension RuleExpression {
    /// The parameter ids the expression reads.
    public var parameterIDs: Set<String> {
        var ids = Set<String>()
        visit { if case .parameter(let id) = $0 { ids.insert(id) } }
        return ids
    }

    /// The event ids the expression reads.
    public var eventIDs: Set<String> {
        var ids = Set<String>()
        visit { if case .donations(let id) = $0 { ids.insert(id) } }
        return ids
    }

    /// Calls `body` with every expression in this one that reads the state or the device (`param`,
    /// `donations`, `context`, `bucket`), outermost first.
    public func visitReads(_ body: (RuleExpression) -> Void) {
        visit { expression in
            switch expression {
            case .parameter, .donations, .context, .bucket: body(expression)
            default: break
            }
        }
    }

    private func visit(_ body: (RuleExpression) -> Void) {
        body(self)
        switch self {
        case .literal, .parameter, .donations, .field, .now, .context, .bucket: break
        case .not(let e), .count(let e), .donatedWithin(let e, _), .largestSubset(let e, _), .smallestSubset(let e, _):
            e.visit(body)
        case .and(let es), .or(let es): for e in es { e.visit(body) }
        case .compare(_, let a, let b), .arithmetic(_, let a, let b), .filter(let a, let b), .contains(let a, let b),
            .compareVersions(let a, let b):
            a.visit(body)
            b.visit(body)
        }
    }
}
