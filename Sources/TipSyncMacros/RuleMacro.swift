import SwiftOperators
public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `#Rule(subject) { predicate }` becomes a `Tips.Rule` carrying the predicate as a
/// `RuleExpression` (the same data form JSON rules have, evaluated by the same evaluator).
/// The compiler has already type-checked the closure against the macro's signature (a parameter's
/// value type, or an event's `RuleInput`) before this expansion runs.
public struct RuleMacro: ExpressionMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> ExprSyntax {
        var arguments = Array(node.arguments)
        var closure = node.trailingClosure
        if closure == nil, let last = arguments.last?.expression.as(ClosureExprSyntax.self) {
            closure = last
            arguments.removeLast()
        }
        guard let closure, arguments.count == 1, let subject = arguments.first?.expression.trimmed else {
            throw MacroError("#Rule takes one parameter or event and a closure: #Rule(Self.$param) { $0 == true }")
        }
        let body = try singleExpression(of: closure)
        let translator = RuleTranslator(subject: subject, subjectName: parameterName(of: closure))
        let expression = try translator.translate(body, scope: .subject)
        return """
            TipSync.Tips.Rule(\(subject)) { __subject in
                \(raw: expression)
            }
            """
    }

    static func singleExpression(of closure: ClosureExprSyntax) throws -> ExprSyntax {
        guard closure.statements.count == 1, let item = closure.statements.first?.item else {
            throw MacroError("a #Rule closure must be a single expression")
        }
        if let expression = item.as(ExprSyntax.self) { return expression }
        if let returned = item.as(ReturnStmtSyntax.self)?.expression { return returned }
        throw MacroError("a #Rule closure must be a single expression")
    }

    /// `$0` unless the closure names its parameter (`{ value in … }`).
    static func parameterName(of closure: ClosureExprSyntax) -> String {
        guard let parameters = closure.signature?.parameterClause else { return "$0" }
        if let list = parameters.as(ClosureShorthandParameterListSyntax.self), let first = list.first {
            return first.name.text
        }
        if let clause = parameters.as(ClosureParameterClauseSyntax.self), let first = clause.parameters.first {
            return (first.secondName ?? first.firstName).text
        }
        return "$0"
    }
}

/// Turns predicate syntax into `RuleExpression` construction code.
struct RuleTranslator {
    enum Scope: Equatable {
        /// The rule's own closure: the name means the parameter value, or the event.
        case subject
        /// A `filter`/`contains` closure over donations: the name means one donation.
        case element(String)
    }

    var subject: ExprSyntax
    var subjectName: String

    func translate(_ raw: ExprSyntax, scope: Scope) throws -> String {
        let expression = (try? OperatorTable.standardOperators.foldAll(raw).as(ExprSyntax.self)) ?? raw
        return try translateFolded(expression, scope: scope)
    }

    private func translateFolded(_ expression: ExprSyntax, scope: Scope) throws -> String {
        if let literal = literal(expression) { return ".literal(\(literal))" }
        if let tuple = expression.as(TupleExprSyntax.self), tuple.elements.count == 1, let inner = tuple.elements.first
        {
            return try translateFolded(inner.expression, scope: scope)
        }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "!" {
            return ".not(\(try translateFolded(prefix.expression, scope: scope)))"
        }
        if let infix = expression.as(InfixOperatorExprSyntax.self),
            let op = infix.operator.as(BinaryOperatorExprSyntax.self)?.operator.text
        {
            return try binary(op, infix.leftOperand, infix.rightOperand, scope: scope)
        }
        if let reference = expression.as(DeclReferenceExprSyntax.self) {
            let name = reference.baseName.text
            if scope == .subject && name == subjectName { return "__subject" }
            if case .element(let element) = scope, name == element {
                throw MacroError(
                    "compare a field of the donation ('\(name).field' or '\(name).date'), not the donation itself")
            }
        }
        if let member = expression.as(MemberAccessExprSyntax.self), let base = member.base {
            let name = member.declName.baseName.text
            if scope == .subject, name == "donations", isName(base, subjectName) { return "__subject" }
            if case .element(let element) = scope, isName(base, element) { return ".field(\"\(name)\")" }
            if isDateNow(expression) { return ".now" }
            if name == "count" { return ".count(\(try translateFolded(base, scope: scope)))" }
            if name == "isEmpty" {
                return ".compare(.equal, .count(\(try translateFolded(base, scope: scope))), .literal(.int(0)))"
            }
        }
        if isDateNow(expression) { return ".now" }
        if let call = expression.as(FunctionCallExprSyntax.self),
            let member = call.calledExpression.as(MemberAccessExprSyntax.self),
            let base = member.base
        {
            let name = member.declName.baseName.text
            let arguments = Array(call.arguments)
            let closure = call.trailingClosure ?? arguments.last?.expression.as(ClosureExprSyntax.self)
            switch name {
            case "donatedWithin" where arguments.count == 1:
                return
                    ".donatedWithin(\(try translateFolded(base, scope: scope)), seconds: TipSync.Tips.DonationTimeRange.__seconds(\(arguments[0].expression.trimmed)))"
            case "filter", "contains":
                guard let closure else { break }
                let element = RuleMacro.parameterName(of: closure)
                let predicate = try translate(try RuleMacro.singleExpression(of: closure), scope: .element(element))
                return ".\(name)(\(try translateFolded(base, scope: scope)), \(predicate))"
            case "largestSubset", "smallestSubset":
                guard let keyPath = arguments.first?.expression.as(KeyPathExprSyntax.self),
                    keyPath.components.count == 1,
                    let property = keyPath.components.first?.component.as(KeyPathPropertyComponentSyntax.self)
                else { throw MacroError("\(name)(groupedBy:) takes a key path to one payload field, like \\.yardID") }
                return
                    ".\(name)(\(try translateFolded(base, scope: scope)), field: \"\(property.declName.baseName.text)\")"
            case "addingTimeInterval" where arguments.count == 1:
                return
                    ".arithmetic(.add, \(try translateFolded(base, scope: scope)), \(try translateFolded(arguments[0].expression, scope: scope)))"
            default: break
            }
        }
        // Anything else must be a value computed in Swift (a constant, a static property…): it is
        // captured when the rule is built, and may not mention the closure's parameters.
        if mentions(expression, names: scopeNames(scope)) {
            throw MacroError(
                "#Rule cannot translate '\(expression.trimmedDescription)'; see README 'Rules' for what rules support")
        }
        return ".__value(\(expression.trimmed))"
    }

    private func binary(_ op: String, _ lhs: ExprSyntax, _ rhs: ExprSyntax, scope: Scope) throws -> String {
        switch op {
        case "&&": return ".and([\(try translateFolded(lhs, scope: scope)), \(try translateFolded(rhs, scope: scope))])"
        case "||": return ".or([\(try translateFolded(lhs, scope: scope)), \(try translateFolded(rhs, scope: scope))])"
        case "==", "!=", "<", "<=", ">", ">=":
            let names = [
                "==": "equal", "!=": "notEqual", "<": "less", "<=": "lessOrEqual", ">": "greater",
                ">=": "greaterOrEqual",
            ]
            return
                ".compare(.\(names[op]!), \(try operand(lhs, other: rhs, scope: scope)), \(try operand(rhs, other: lhs, scope: scope)))"
        case "+", "-", "*", "/":
            let names = ["+": "add", "-": "subtract", "*": "multiply", "/": "divide"]
            return
                ".arithmetic(.\(names[op]!), \(try operand(lhs, other: rhs, scope: scope)), \(try operand(rhs, other: lhs, scope: scope)))"
        default:
            throw MacroError("#Rule does not support the operator '\(op)'")
        }
    }

    /// An operand compared with the parameter itself gets the parameter's type as context, so
    /// `$0 == .pro` works for an enum parameter.
    private func operand(_ expression: ExprSyntax, other: ExprSyntax, scope: Scope) throws -> String {
        let translated = try translateFolded(expression, scope: scope)
        if translated.hasPrefix(".__value("), scope == .subject, isName(other, subjectName) {
            return ".__value(\(expression.trimmed), like: \(subject))"
        }
        return translated
    }

    private func literal(_ expression: ExprSyntax) -> String? {
        if let value = expression.as(BooleanLiteralExprSyntax.self) { return ".bool(\(value.literal.text))" }
        if let value = expression.as(IntegerLiteralExprSyntax.self) { return ".int(\(value.literal.text))" }
        if let value = expression.as(FloatLiteralExprSyntax.self) { return ".double(\(value.literal.text))" }
        if expression.is(NilLiteralExprSyntax.self) { return ".null" }
        if let value = expression.as(StringLiteralExprSyntax.self),
            value.segments.allSatisfy({ $0.is(StringSegmentSyntax.self) })
        {
            return ".string(\(value.trimmedDescription))"
        }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-",
            let inner = literal(prefix.expression), inner.hasPrefix(".int(") || inner.hasPrefix(".double(")
        {
            return inner.replacingFirst("(", with: "(-")
        }
        return nil
    }

    private func isDateNow(_ expression: ExprSyntax) -> Bool {
        let text = expression.trimmedDescription
        return text == "Date.now" || text == ".now" || text == "Date()" || text == "Foundation.Date.now"
    }

    private func isName(_ expression: ExprSyntax, _ name: String) -> Bool {
        expression.as(DeclReferenceExprSyntax.self)?.baseName.text == name
    }

    private func scopeNames(_ scope: Scope) -> Set<String> {
        if case .element(let element) = scope { return [subjectName, element] }
        return [subjectName]
    }

    private func mentions(_ expression: ExprSyntax, names: Set<String>) -> Bool {
        expression.tokens(viewMode: .sourceAccurate).contains { token in
            names.contains(token.text) || (token.text.hasPrefix("$") && token.text.dropFirst().allSatisfy(\.isNumber))
        }
    }
}

extension String {
    fileprivate func replacingFirst(_ target: Character, with replacement: String) -> String {
        guard let index = firstIndex(of: target) else { return self }
        return String(self[..<index]) + replacement + String(self[index...].dropFirst())
    }
}
