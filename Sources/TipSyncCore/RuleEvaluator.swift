import Synchronization

/// What rule evaluation reads: parameter values, visible donations and the current instant.
public protocol RuleContext {
    /// The parameter's value, or its default.
    func parameterValue(_ id: String) -> JSONValue
    /// The event's donations visible to rules, oldest first.
    func donations(_ event: String) -> ArraySlice<Donation>
    /// The evaluation instant, seconds since 1970.
    var now: Double { get }
    /// Where results of time-independent donation filters may be remembered, or `nil`.
    var ruleCache: RuleCache? { get }
    /// The version of an event's donation list (see ``ReplicaState/EventRecord/version``).
    func donationsVersion(_ event: String) -> UInt64?
    /// What the device says of itself (targeting, protocol.md §13.8).
    var deviceContext: DeviceContext { get }
}

extension RuleContext {
    public var ruleCache: RuleCache? { nil }
    public func donationsVersion(_ event: String) -> UInt64? { nil }
    public var deviceContext: DeviceContext { DeviceContext() }
}

/// Remembers which donations a compiled filter selected, per event list version and visible range,
/// so re-evaluating unchanged state does not re-scan every donation. Results depend only on the
/// key, so a hit returns exactly what a scan would.
public final class RuleCache: Sendable {
    struct Key: Hashable {
        var event: String
        var version: UInt64
        var range: Range<Int>
        var predicate: CompiledPredicate
    }

    private let entries = Mutex<[Key: [Int]]>([:])
    private let capacity: Int

    public init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    func positions(for key: Key, compute: () -> [Int]) -> [Int] {
        if let hit = entries.withLock({ $0[key] }) { return hit }
        let value = compute()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = value
        }
        return value
    }
}

/// Why a rule could not be evaluated (a type error in a data rule, for example). A rule that fails
/// to evaluate does not hold.
public struct RuleEvaluationError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// Evaluates ``RuleExpression``s: the single evaluator behind `#Rule` and JSON rules alike.
///
/// Donation lists are views (a slice of the event's sorted donations, optionally narrowed to a set of
/// positions), so filtering and counting never copy donations.
public struct RuleEvaluator<Context: RuleContext> {
    public var context: Context

    public init(context: Context) {
        self.context = context
    }

    enum Value {
        case json(JSONValue)
        case list(RuleDonationList)
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

    private func list(_ expression: RuleExpression, element: Donation?) throws -> RuleDonationList {
        guard case .list(let donations) = try evaluate(expression, element: element) else {
            throw RuleEvaluationError(description: "expected a donation list from \(expression.json.canonicalText)")
        }
        return donations
    }

    private func json(_ expression: RuleExpression, element: Donation?) throws -> JSONValue {
        guard case .json(let value) = try evaluate(expression, element: element) else {
            throw RuleEvaluationError(
                description: "expected a value, got a donation list from \(expression.json.canonicalText)")
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
            return .list(
                RuleDonationList(
                    base: context.donations(event), source: context.donationsVersion(event).map { (event, $0) }))
        case .field(let name):
            guard let element else {
                throw RuleEvaluationError(description: "field '\(name)' used outside filter/contains")
            }
            return .json(RuleOperations.field(name, of: element))
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
            return .json(
                .bool(RuleOperations.compare(op, try json(a, element: element), try json(b, element: element))))
        case .arithmetic(let op, let a, let b):
            let lhs = try json(a, element: element)
            let rhs = try json(b, element: element)
            return .json(try RuleOperations.arithmetic(op, lhs, rhs))
        case .count(let e):
            return .json(.int(Int64(try list(e, element: element).count)))
        case .filter(let e, let condition):
            let donations = try list(e, element: element)
            if let compiled = CompiledPredicate(condition) {
                guard let cache = context.ruleCache, let source = donations.source, donations.positions == nil else {
                    return .list(donations.selecting(compiled))
                }
                let key = RuleCache.Key(
                    event: source.event, version: source.version, range: donations.base.indices, predicate: compiled)
                let positions = cache.positions(for: key) { donations.selecting(compiled).positions ?? [] }
                return .list(RuleDonationList(base: donations.base, positions: positions))
            }
            return .list(try donations.selecting { try truth(condition, element: copy $0) })
        case .contains(let e, let condition):
            let donations = try list(e, element: element)
            if let compiled = CompiledPredicate(condition) { return .json(.bool(donations.contains(where: compiled))) }
            return .json(.bool(try donations.contains { try truth(condition, element: copy $0) }))
        case .donatedWithin(let e, let seconds):
            let threshold = Int64(saturating: ((context.now - seconds) * 1000).rounded(.up))
            let donations = try list(e, element: element)
            guard donations.positions == nil else {
                return .list(donations.selecting { $0.date >= threshold })
            }
            // Donations are sorted by date: binary-search the first one inside the window.
            let base = donations.base
            var low = base.startIndex
            var high = base.endIndex
            while low < high {
                let mid = (low + high) / 2
                if base[mid].date < threshold { low = mid + 1 } else { high = mid }
            }
            return .list(RuleDonationList(base: base[low...], source: donations.source))
        case .largestSubset(let e, let field), .smallestSubset(let e, let field):
            let largest: Bool
            if case .largestSubset = expression { largest = true } else { largest = false }
            return .list(RuleOperations.subset(try list(e, element: element), field: field, largest: largest))
        case .context(let name):
            return .json(context.deviceContext.value(name))
        case .bucket(let key):
            guard let account = context.deviceContext.account else {
                throw RuleEvaluationError(description: "bucket '\(key)': this device does not know its account yet")
            }
            return .json(.int(Int64(RolloutBucket.bucket(account: account, key: key))))
        case .compareVersions(let a, let b):
            let order = try RuleOperations.compareVersions(try json(a, element: element), try json(b, element: element))
            return .json(.int(Int64(order)))
        }
    }

}

extension RuleExpression.Comparison {
    /// The comparison with its operands swapped (`a < b` ⇔ `b > a`).
    var mirrored: Self {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        }
    }
}

/// A list of donations: `base`, or only the donations of `base` at `positions`.
struct RuleDonationList {
    var base: ArraySlice<Donation>
    var positions: [Int]? = nil
    /// The event and list version `base` is a slice of, when known (for ``RuleCache``).
    var source: (event: String, version: UInt64)? = nil

    var count: Int { positions?.count ?? base.count }

    /// Visits each donation in place: reading through the buffer borrows donations instead of
    /// copying them (a copy retains every reference a donation holds — measurable at 100k per query).
    func visitEach(_ body: (borrowing Donation) throws -> Void) rethrows {
        try base.withUnsafeBufferPointer { buffer in
            guard let pointer = buffer.baseAddress else { return }
            if let positions {
                for position in positions { try body(pointer[position - base.startIndex]) }
            } else {
                for offset in 0..<buffer.count { try body(pointer[offset]) }
            }
        }
    }

    /// The donations a compiled predicate accepts (no closure per donation, no copies).
    func selecting(_ predicate: CompiledPredicate) -> RuleDonationList {
        var selected: [Int] = []
        base.withUnsafeBufferPointer { buffer in
            guard let pointer = buffer.baseAddress else { return }
            if let positions {
                for position in positions where predicate.test(pointer[position - base.startIndex]) {
                    selected.append(position)
                }
            } else {
                for offset in 0..<buffer.count where predicate.test(pointer[offset]) {
                    selected.append(base.startIndex + offset)
                }
            }
        }
        return RuleDonationList(base: base, positions: selected)
    }

    func contains(where predicate: CompiledPredicate) -> Bool {
        var found = false
        visitEach { donation in if !found, predicate.test(donation) { found = true } }
        return found
    }

    func selecting(_ isIncluded: (borrowing Donation) throws -> Bool) rethrows -> RuleDonationList {
        var selected: [Int] = []
        try base.withUnsafeBufferPointer { buffer in
            guard let pointer = buffer.baseAddress else { return }
            if let positions {
                for position in positions where try isIncluded(pointer[position - base.startIndex]) {
                    selected.append(position)
                }
            } else {
                for offset in 0..<buffer.count where try isIncluded(pointer[offset]) {
                    selected.append(base.startIndex + offset)
                }
            }
        }
        return RuleDonationList(base: base, positions: selected)
    }

    func contains(where predicate: (borrowing Donation) throws -> Bool) rethrows -> Bool {
        var found = false
        try visitEach { donation in if !found, try predicate(donation) { found = true } }
        return found
    }
}

/// A predicate over one donation that only compares fields with constants (the common case),
/// compiled once per list operation instead of being interpreted for every donation.
indirect enum CompiledPredicate: Hashable, Sendable {
    case date(RuleExpression.Comparison, Double)
    case number(RuleExpression.Comparison, field: String, Double)
    case value(RuleExpression.Comparison, field: String, JSONValue)
    case not(CompiledPredicate)
    case and([CompiledPredicate])
    case or([CompiledPredicate])

    init?(_ expression: RuleExpression) {
        switch expression {
        case .compare(let op, .field(let name), .literal(let value)):
            self.init(op, field: name, value)
        case .compare(let op, .literal(let value), .field(let name)):
            self.init(op.mirrored, field: name, value)
        case .not(let inner):
            guard let inner = CompiledPredicate(inner) else { return nil }
            self = .not(inner)
        case .and(let parts), .or(let parts):
            let compiled = parts.compactMap(CompiledPredicate.init)
            guard compiled.count == parts.count else { return nil }
            if case .and = expression { self = .and(compiled) } else { self = .or(compiled) }
        default:
            return nil
        }
    }

    private init(_ op: RuleExpression.Comparison, field name: String, _ value: JSONValue) {
        if name == "date", let seconds = value.number {
            self = .date(op, seconds)
        } else if let number = value.number {
            self = .number(op, field: name, number)
        } else {
            self = .value(op, field: name, value)
        }
    }

    func test(_ donation: borrowing Donation) -> Bool {
        switch self {
        case .date(let op, let seconds):
            return RuleOperations.compareNumbers(op, Double(donation.date) / 1000, seconds)
        case .number(let op, let name, let number):
            guard let field = donation.field(name) else { return RuleOperations.compare(op, .null, .double(number)) }
            if let fieldNumber = field.number { return RuleOperations.compareNumbers(op, fieldNumber, number) }
            return RuleOperations.compare(op, field, .double(number))
        case .value(let op, let name, let value):
            return RuleOperations.compare(op, donation.field(name) ?? .null, value)
        case .not(let inner):
            return !inner.test(donation)
        case .and(let parts):
            for part in parts where !part.test(donation) { return false }
            return true
        case .or(let parts):
            for part in parts where part.test(donation) { return true }
            return false
        }
    }
}

/// Comparisons and arithmetic shared by every evaluation.
enum RuleOperations {
    static func field(_ name: String, of donation: Donation) -> JSONValue {
        if name == "date" { return .double(Double(donation.date) / 1000) }
        return donation.field(name) ?? .null
    }

    static func compareNumbers(_ op: RuleExpression.Comparison, _ a: Double, _ b: Double) -> Bool {
        switch op {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        }
    }

    static func compare(_ op: RuleExpression.Comparison, _ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        if let a = lhs.number, let b = rhs.number { return compareNumbers(op, a, b) }
        let order: Int?
        if case .string(let a) = lhs, case .string(let b) = rhs {
            // By Unicode code point (the same order as UTF-8 bytes), never by canonical equivalence.
            let (x, y) = (a.unicodeScalars, b.unicodeScalars)
            order = x.elementsEqual(y) ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
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

    /// IEEE-754 binary64 on every number, integers too (protocol.md §13.4): `(2^53 − 1) + 2` is 2^53,
    /// and a literal written `3.0` is the number 3. No client computes integers exactly.
    static func arithmetic(_ op: RuleExpression.Arithmetic, _ lhs: JSONValue, _ rhs: JSONValue) throws -> JSONValue {
        guard let a = lhs.number, let b = rhs.number else {
            throw RuleEvaluationError(
                description: "'\(op.rawValue)' needs numbers, got \(lhs.canonicalText) and \(rhs.canonicalText)")
        }
        let result: Double
        switch op {
        case .add: result = a + b
        case .subtract: result = a - b
        case .multiply: result = a * b
        case .divide: result = a / b
        }
        // Infinities and NaN are not JSON numbers: division by zero or overflow is an evaluation error.
        guard result.isFinite else {
            throw RuleEvaluationError(
                description: "'\(op.rawValue)' of \(lhs.canonicalText) and \(rhs.canonicalText) is not a finite number")
        }
        return JSONValue.double(result).canonicalNumbers
    }

    /// -1, 0 or 1 (protocol.md §13.8): each version is a string of numbers of 1 to 9 decimal digits separated by `.`,
    /// optionally followed by `-` or `+` and anything (a pre-release or build label, ignored); the
    /// numbers compare in turn, a missing one counting as 0. Anything else is an evaluation error.
    static func compareVersions(_ lhs: JSONValue, _ rhs: JSONValue) throws -> Int {
        func parts(_ value: JSONValue) throws -> [UInt64] {
            guard case .string(let text) = value else {
                throw RuleEvaluationError(
                    description: "compareVersions needs version strings, got \(value.canonicalText)")
            }
            let core = text.prefix { $0 != "-" && $0 != "+" }
            let numbers = core.split(separator: ".", omittingEmptySubsequences: false).map { part in
                (1...9).contains(part.utf8.count)
                    && part.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
                    ? UInt64(part) : nil
            }
            guard !numbers.isEmpty, numbers.allSatisfy({ $0 != nil }) else {
                throw RuleEvaluationError(description: "'\(text)' is not a version (numbers separated by '.')")
            }
            return numbers.map { $0! }
        }
        let (a, b) = (try parts(lhs), try parts(rhs))
        for index in 0..<max(a.count, b.count) {
            let (x, y) = (index < a.count ? a[index] : 0, index < b.count ? b[index] : 0)
            if x != y { return x < y ? -1 : 1 }
        }
        return 0
    }

    /// Groups by the field's value and picks the largest (or smallest) group; ties go to the group
    /// whose value's canonical JSON text sorts first by UTF-8 bytes, so every replica picks the same one.
    static func subset(_ donations: RuleDonationList, field: String, largest: Bool) -> RuleDonationList {
        var groups: [JSONValue: [Donation]] = [:]
        donations.visitEach { groups[Self.field(field, of: $0), default: []].append($0) }
        let best = groups.min { a, b in
            if a.value.count != b.value.count {
                return largest ? a.value.count > b.value.count : a.value.count < b.value.count
            }
            return a.key.canonicalText.utf8.lexicographicallyPrecedes(b.key.canonicalText.utf8)
        }
        return RuleDonationList(base: ArraySlice(best?.value ?? []))
    }
}
