extension Tips {
    /// Builds `var rules: [Rule]` from a list of `#Rule`s (all must hold).
    @resultBuilder
    public enum RuleBuilder {
        public static func buildExpression(_ rule: Rule) -> [Rule] { [rule] }
        public static func buildExpression(_ rules: [Rule]) -> [Rule] { rules }
        public static func buildBlock(_ parts: [Rule]...) -> [Rule] { parts.flatMap { $0 } }
        public static func buildOptional(_ part: [Rule]?) -> [Rule] { part ?? [] }
        public static func buildEither(first part: [Rule]) -> [Rule] { part }
        public static func buildEither(second part: [Rule]) -> [Rule] { part }
        public static func buildArray(_ parts: [[Rule]]) -> [Rule] { parts.flatMap { $0 } }
    }

    /// Builds `var options: [Option]`.
    @resultBuilder
    public enum OptionsBuilder {
        public static func buildExpression(_ option: any TipOption) -> [any TipOption] { [option] }
        public static func buildBlock(_ parts: [any TipOption]...) -> [any TipOption] { parts.flatMap { $0 } }
        public static func buildOptional(_ part: [any TipOption]?) -> [any TipOption] { part ?? [] }
        public static func buildEither(first part: [any TipOption]) -> [any TipOption] { part }
        public static func buildEither(second part: [any TipOption]) -> [any TipOption] { part }
        public static func buildArray(_ parts: [[any TipOption]]) -> [any TipOption] { parts.flatMap { $0 } }
    }

    /// Builds `var actions: [Action]`.
    @resultBuilder
    public enum ActionBuilder {
        public static func buildExpression(_ action: Action) -> [Action] { [action] }
        public static func buildBlock(_ parts: [Action]...) -> [Action] { parts.flatMap { $0 } }
        public static func buildOptional(_ part: [Action]?) -> [Action] { part ?? [] }
        public static func buildEither(first part: [Action]) -> [Action] { part }
        public static func buildEither(second part: [Action]) -> [Action] { part }
        public static func buildArray(_ parts: [[Action]]) -> [Action] { parts.flatMap { $0 } }
    }

    /// Builds a tip group's tips.
    @resultBuilder
    public enum TipGroupBuilder {
        public static func buildExpression(_ tip: any Tip) -> [any Tip] { [tip] }
        public static func buildBlock(_ parts: [any Tip]...) -> [any Tip] { parts.flatMap { $0 } }
        public static func buildOptional(_ part: [any Tip]?) -> [any Tip] { part ?? [] }
        public static func buildEither(first part: [any Tip]) -> [any Tip] { part }
        public static func buildEither(second part: [any Tip]) -> [any Tip] { part }
        public static func buildArray(_ parts: [[any Tip]]) -> [any Tip] { parts.flatMap { $0 } }
    }
}
