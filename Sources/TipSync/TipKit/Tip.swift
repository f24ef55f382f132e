import Foundation

/// A feature tip, with TipKit's shape: content, rules that decide eligibility, and options.
///
/// ```swift
/// struct FavoriteTip: Tip {
///     var title: String { "Save as a Favorite" }
///     @Parameter static var isLoggedIn: Bool = false
///     var rules: [Rule] { #Rule(Self.$isLoggedIn) { $0 == true } }
///     var options: [Option] { Tips.MaxDisplayCount(3) }
/// }
/// ```
public protocol Tip: Identifiable, Sendable where ID == String {
    /// Status, display counts and invalidation are keyed by this id. Default: the type's name.
    var id: String { get }
    var title: String { get }
    var message: String? { get }
    /// An image name (an SF Symbol on Apple platforms, an icon name elsewhere).
    var image: String? { get }
    @Tips.ActionBuilder var actions: [Tips.Action] { get }
    /// All must hold. No rules: eligible until invalidated.
    @Tips.RuleBuilder var rules: [Tips.Rule] { get }
    @Tips.OptionsBuilder var options: [any TipOption] { get }
}

extension Tip {
    public typealias Action = Tips.Action
    public typealias Rule = Tips.Rule
    public typealias Option = any TipOption
    public typealias InvalidationReason = Tips.InvalidationReason
    public typealias Status = Tips.Status
    public typealias Event<DonationInfo: Codable & Sendable> = Tips.Event<DonationInfo>

    public var id: String { Self.defaultID }
    public var message: String? { nil }
    public var image: String? { nil }
    public var actions: [Tips.Action] { [] }
    public var rules: [Tips.Rule] { [] }
    public var options: [any TipOption] { [] }

    static var defaultID: String { String(describing: Self.self) }

    /// This tip as data (the form catalogs use and the evaluator reads).
    public var definition: TipDefinition {
        var resolvedOptions = TipOptions()
        for option in options { option.apply(to: &resolvedOptions) }
        return TipDefinition(
            id: id, title: title, message: message, image: image,
            actions: actions.enumerated().map { index, action in
                ActionDefinition(id: action.id ?? String(index), title: action.title)
            },
            rules: rules.map(\.expression), options: resolvedOptions)
    }

    /// Registers the parameters and events the rules use (their defaults and limits) with `replica`.
    func register(in replica: TipsReplica) -> TipDefinition {
        Tips.applyTypeOverrides(Self.self, id: id, in: replica)
        let rules = rules
        for rule in rules {
            for parameter in rule.parameters { replica.register(parameter: parameter) }
            for event in rule.events { replica.register(event: event) }
        }
        return definition
    }
}
