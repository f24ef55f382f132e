/// A tip parameter: `@Parameter static var isLoggedIn: Bool = false`, or
/// `@Parameter(.transient) static var inTrial: Bool = false` for one reset to its default at each launch.
///
/// Expands to a computed static property read from and written to the configured replica, and a peer
/// `static let $isLoggedIn: Tips.Parameter<Bool>` that rules refer to (`#Rule(Self.$isLoggedIn) { … }`).
/// The parameter's id is `"TypeName.propertyName"` unless given (below).
@attached(accessor, names: named(get), named(set))
@attached(peer, names: prefixed(`$`))
public macro Parameter(_ options: Tips.ParameterOption...) =
    #externalMacro(module: "TipSyncMacros", type: "ParameterMacro")

/// A tip parameter with an explicit id — `@Parameter(id: "isLoggedIn") static var isLoggedIn: Bool =
/// false` — the id it is stored and synced under, and the one catalogs and other platforms use for it
/// (`protocol.md` §13.7). Changing a parameter's id starts it afresh from its default.
@attached(accessor, names: named(get), named(set))
@attached(peer, names: prefixed(`$`))
public macro Parameter(id: String, _ options: Tips.ParameterOption...) =
    #externalMacro(module: "TipSyncMacros", type: "ParameterMacro")

/// A tip rule: `#Rule(Self.$isLoggedIn) { $0 == true }` or
/// `#Rule(Self.openedDetail) { $0.donations.donatedWithin(.days(5)).count >= 3 }`.
///
/// The compiler type-checks the closure against the subject; the macro translates it into a ``RuleExpression`` — the same
/// data form catalog rules have — so Swift and JSON rules share one evaluator. Supported: literals,
/// `==` `!=` `<` `<=` `>` `>=` `&&` `||` `!` `+` `-` `*` `/`, `donations`, `count`, `isEmpty`,
/// `filter`, `contains`, `donatedWithin`, `largestSubset(groupedBy:)`, `smallestSubset(groupedBy:)`,
/// payload fields and `date`, `Date.now`, `addingTimeInterval`, and any Swift value that does not
/// depend on the closure's parameter (captured when the rule is built).
@freestanding(expression)
public macro Rule<Value>(_ parameter: Tips.Parameter<Value>, _ predicate: (Value) -> Bool) -> Tips.Rule =
    #externalMacro(module: "TipSyncMacros", type: "RuleMacro")

/// A rule over an event's donations: `#Rule(Self.openedDetail) { $0.donations.count >= 3 }`.
@freestanding(expression)
public macro Rule<Info>(_ event: Tips.Event<Info>, _ predicate: (Tips.Event<Info>.RuleInput) -> Bool) -> Tips.Rule =
    #externalMacro(module: "TipSyncMacros", type: "RuleMacro")
