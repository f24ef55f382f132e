import Foundation

extension Tips {
    /// A rule: a ``RuleExpression`` and the parameters and events it reads (for their defaults and limits).
    ///
    /// Written as `#Rule(subject) { predicate }`, loaded from JSON, or combined with `||` and `&&`.
    public struct Rule: Sendable, Hashable {
        public let expression: RuleExpression
        public let parameters: [ParameterDefinition]
        public let events: [EventDefinition]

        public init(expression: RuleExpression, parameters: [ParameterDefinition] = [], events: [EventDefinition] = [])
        {
            self.expression = expression
            self.parameters = parameters
            self.events = events
        }

        /// Used by `#Rule` over a parameter: `build` is the macro's translation of the closure,
        /// given the expression that reads the parameter.
        public init<Value>(_ parameter: Parameter<Value>, _ build: (RuleExpression) -> RuleExpression) {
            self.init(expression: build(.parameter(parameter.id)), parameters: [parameter.definition])
        }

        /// Used by `#Rule` over an event: `build` gets the expression for the event's donations.
        public init<Info>(_ event: Event<Info>, _ build: (RuleExpression) -> RuleExpression) {
            self.init(expression: build(.donations(event.id)), events: [event.definition])
        }

        /// A rule from its JSON form.
        public init(json: String) throws {
            self.init(expression: try JSONCoding.decoder.decode(RuleExpression.self, from: Data(json.utf8)))
        }

        /// Either rule holds (TipKit's OR compound rule).
        public static func || (lhs: Rule, rhs: Rule) -> Rule {
            Rule(
                expression: .or([lhs.expression, rhs.expression]), parameters: lhs.parameters + rhs.parameters,
                events: lhs.events + rhs.events)
        }

        /// Both rules hold.
        public static func && (lhs: Rule, rhs: Rule) -> Rule {
            Rule(
                expression: .and([lhs.expression, rhs.expression]), parameters: lhs.parameters + rhs.parameters,
                events: lhs.events + rhs.events)
        }

        /// Any of the rules holds.
        public static func any(_ rules: [Rule]) -> Rule {
            Rule(
                expression: .or(rules.map(\.expression)), parameters: rules.flatMap(\.parameters),
                events: rules.flatMap(\.events))
        }
    }
}

extension RuleExpression {
    /// A Swift value captured into a rule (used by `#Rule` expansions). Dates become seconds since 1970.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static func __value<T: Encodable>(_ value: T) -> RuleExpression {
        if let date = value as? Date { return .literal(.double(date.timeIntervalSince1970)) }
        return .literal((try? JSONValue(encoding: value)) ?? .null)
    }

    /// A value compared with a parameter: the parameter gives it its type (`$0 == .pro`).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static func __value<T: Encodable>(_ value: T, like parameter: Tips.Parameter<T>) -> RuleExpression {
        __value(value)
    }
}
