/// A tip's content in one language (protocol.md §13.10): any of title, message, image and action
/// titles (by action id); what it leaves out comes from the next locale of the fallback chain.
public struct TipLocalization: Sendable, Hashable, Codable {
    public var title: String?
    public var message: String?
    public var image: String?
    /// Action titles by action id.
    public var actions: [String: String]?

    public init(title: String? = nil, message: String? = nil, image: String? = nil, actions: [String: String]? = nil) {
        self.title = title
        self.message = message
        self.image = image
        self.actions = actions
    }
}

extension TipDefinition {
    /// The locales a device's locale falls back through (protocol.md §13.10): itself in canonical
    /// case, then with its last subtag removed, one at a time (`fr-Latn-CA`, `fr-Latn`, `fr`). The
    /// tip's own fields come after all of them.
    public static func fallbackChain(for locale: String) -> [String] {
        var subtags = DeviceContext.canonicalLocale(locale).split(separator: "-").map(String.init)
        var chain: [String] = []
        while !subtags.isEmpty {
            chain.append(subtags.joined(separator: "-"))
            subtags.removeLast()
        }
        return chain
    }

    /// This tip with its title, message, image and action titles in `locale` (protocol.md §13.10):
    /// each field from the first locale of the fallback chain that has it, else the tip's own.
    /// `nil` or a locale the tip has no strings for gives the tip as written.
    public func localized(for locale: String?) -> TipDefinition {
        guard let localizations, !localizations.isEmpty, let locale else { return self }
        let chain = Self.fallbackChain(for: locale).compactMap { localizations[$0] }
        guard !chain.isEmpty else { return self }
        var tip = self
        tip.title = chain.lazy.compactMap(\.title).first ?? title
        tip.message = chain.lazy.compactMap(\.message).first ?? message
        tip.image = chain.lazy.compactMap(\.image).first ?? image
        tip.actions = actions.map { action in
            ActionDefinition(
                id: action.id, title: chain.lazy.compactMap { $0.actions?[action.id] }.first ?? action.title)
        }
        return tip
    }
}
