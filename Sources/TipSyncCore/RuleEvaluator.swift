/// What rule evaluation reads: parameter values, visible donations and the current instant.
public protocol RuleContext {
    /// The parameter's value, or its default.
    func parameterValue(_ id: String) -> JSONValue
    /// The event's donations visible to rules, oldest first.
    func donations(_ event: String) -> ArraySlice<Donation>
    /// The evaluation instant, seconds since 1970.
    var now: Double { get }
}

/// Why a rule could not be evaluated (a type error in a data rule, for example). A rule that fails
/// to evaluate does not hold.
public struct RuleEvaluationError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// Evaluates ``RuleExpression``s: the single evaluator behind `#Rule` and JSON rules alike.
public struct RuleEvaluator<Context: RuleContext> {
    public var context: Context

    public init(context: Context) {
        self.context = context
    }

    enum Value {
        case json(JSONValue)
        case list(ArraySlice<Donation>)
    }

    /// Whether `expression` holds.
    public func holds(_ expression: RuleExpression) throws -> Bool {
        try truth(expression, element: nil)
    }

    private func truth(_ expression: RuleExpression, element: Donation?) throws -> Bool {
        guard case .json(.bool(let result)) = try evaluate(expression, element: element) else {
            throw RuleEvaluationError(description: "expected a true/false result from \(expression.json.canonicalText)")
        }
        return result
    }

    private func list(_ expression: RuleExpression, element: Donation?) throws -> ArraySlice<Donation> {
        guard case .list(let donations) = try evaluate(expression, element: element) else {
            throw RuleEvaluationError(description: "expected a donation list from \(expression.json.canonicalText)")
        }
        return donations
    }

    private func json(_ expression: RuleExpression, element: Donation?) throws -> JSONValue {
        guard case .json(let value) = try evaluate(expression, element: element) else {
            throw RuleEvaluationError(description: "expected a value, got a donation list from \(expression.json.canonicalText)")
        }
        return value
    }

    private func evaluate(_ expression: RuleExpression, element: Donation?) throws -> Value {
        switch expression {
        case .literal(let value):
            return .json(value)
        case .parameter(let id):
            return .json(context.parameterValue(id))
        case .donations(let event):
            return .list(context.donations(event))
        case .field(let name):
            guard let element else { throw RuleEvaluationError(description: "field '\(name)' used outside filter/contains") }
            return .json(Self.field(name, of: element))
        case .now:
            return .json(.double(context.now))
        case .not(let e):
            return .json(.bool(try !truth(e, element: element)))
        case .and(let es):
            for e in es where try !truth(e, element: element) { return .json(.bool(false)) }
            return .json(.bool(true))
        case .or(let es):
            for e in es where try truth(e, element: element) { return .json(.bool(true)) }
            return .json(.bool(false))
        case .compare(let op, let a, let b):
            return .json(.bool(Self.compare(op, try json(a, element: element), try json(b, element: element))))
        case .arithmetic(let op, let a, let b):
            let lhs = try json(a, element: element)
            let rhs = try json(b, element: element)
            return .json(try Self.arithmetic(op, lhs, rhs))
        case .count(let e):
            return .json(.int(Int64(try list(e, element: element).count)))
        case .filter(let e, let predicate):
            let donations = try list(e, element: element)
            return .list(ArraySlice(try donations.filter { try truth(predicate, element: $0) }))
        case .contains(let e, let predicate):
            let donations = try list(e, element: element)
            return .json(.bool(try donations.contains { try truth(predicate, element: $0) }))
        case .donatedWithin(let e, let seconds):
            let donations = try list(e, element: element)
            let threshold = Int64(((context.now - seconds) * 1000).rounded(.up))
            // Donations are sorted by date: binary-search the first one inside the window.
            var low = donations.startIndex
            var high = donations.endIndex
            while low < high {
                let mid = (low + high) / 2
                if donations[mid].date < threshold { low = mid + 1 } else { high = mid }
            }
            return .list(donations[low...])
        case .largestSubset(let e, let field), .smallestSubset(let e, let field):
            let largest: Bool
            if case .largestSubset = expression { largest = true } else { largest = false }
            return .list(Self.subset(try list(e, element: element), field: field, largest: largest))
        }
    }

    static func field(_ name: String, of donation: Donation) -> JSONValue {
        if name == "date" { return .double(Double(donation.date) / 1000) }
        return donation.info?[name] ?? .null
    }

    static func compare(_ op: RuleExpression.Comparison, _ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        let order: Int?
        if let a = lhs.number, let b = rhs.number {
            order = a < b ? -1 : (a > b ? 1 : 0)
        } else if case .string(let a) = lhs, case .string(let b) = rhs {
            order = a < b ? -1 : (a > b ? 1 : 0)
        } else {
            order = lhs == rhs ? 0 : nil
        }
        switch op {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order.map { $0 < 0 } ?? false
        case .lessOrEqual: return order.map { $0 <= 0 } ?? false
        case .greater: return order.map { $0 > 0 } ?? false
        case .greaterOrEqual: return order.map { $0 >= 0 } ?? false
        }
    }

    static func arithmetic(_ op: RuleExpression.Arithmetic, _ lhs: JSONValue, _ rhs: JSONValue) throws -> JSONValue {
        if case .int(let a) = lhs, case .int(let b) = rhs, op != .divide {
            let (result, overflow): (Int64, Bool)
            switch op {
            case .add: (result, overflow) = a.addingReportingOverflow(b)
            case .subtract: (result, overflow) = a.subtractingReportingOverflow(b)
            default: (result, overflow) = a.multipliedReportingOverflow(by: b)
            }
            if !overflow { return .int(result) }
        }
        guard let a = lhs.number, let b = rhs.number else {
            throw RuleEvaluationError(description: "'\(op.rawValue)' needs numbers, got \(lhs.canonicalText) and \(rhs.canonicalText)")
        }
        switch op {
        case .add: return .double(a + b)
        case .subtract: return .double(a - b)
        case .multiply: return .double(a * b)
        case .divide: return .double(a / b)
        }
    }

    /// Groups by the field's value and picks the largest (or smallest) group; ties go to the group
    /// whose value's canonical JSON sorts first, so every replica picks the same one.
    static func subset(_ donations: ArraySlice<Donation>, field: String, largest: Bool) -> ArraySlice<Donation> {
        var groups: [JSONValue: [Donation]] = [:]
        for donation in donations { groups[Self.field(field, of: donation), default: []].append(donation) }
        let best = groups.min { a, b in
            if a.value.count != b.value.count { return largest ? a.value.count > b.value.count : a.value.count < b.value.count }
            return a.key.canonicalText < b.key.canonicalText
        }
        return ArraySlice(best?.value ?? [])
    }
}
