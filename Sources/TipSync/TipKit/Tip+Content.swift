import TipSyncCore

/// What a tip shows: its title, message, image and actions.
public struct TipContent: Sendable, Hashable {
    public var title: String
    public var message: String?
    /// The catalog's `image` string: an SF Symbol's name or a reference to an image file — see
    /// ``imageKind``.
    public var image: String?
    public var actions: [ActionDefinition]

    public init(title: String, message: String? = nil, image: String? = nil, actions: [ActionDefinition] = []) {
        self.title = title
        self.message = message
        self.image = image
        self.actions = actions
    }

    /// How ``image`` reads (protocol.md §13.1, "Images"): `.symbol("star")` for
    /// `Image(systemName:)`, `.reference("https://…")` for an image file; `nil` for none.
    public var imageKind: TipImage? { TipImage(image) }

    init(_ definition: TipDefinition) {
        self.init(
            title: definition.title, message: definition.message, image: definition.image,
            actions: definition.actions)
    }
}

extension Tip {
    /// What to show for this tip now: the server catalog's title, message, image and actions when
    /// the app follows the server's catalog (``SyncConfiguration/followsServerCatalog``) and it has a
    /// tip with this id — an operator's edit reaches the screen without an app release — else the
    /// type's own ``title``, ``message``, ``image`` and ``actions`` — in the device's language when the
    /// catalog tip has `localizations` (protocol.md §13.10). Views show this, not `title`.
    public var content: TipContent {
        guard let replica = Tips.replica else { return TipContent(definition) }
        return content(in: replica)
    }

    /// ``content`` on an explicit replica, in `locale` (default: the device's,
    /// ``TipsReplica/deviceContext``): a catalog tip's `localizations` give its strings in the first
    /// locale of the fallback chain that has them (`fr-CA` → `fr` → as written; protocol.md §13.10).
    public func content(in replica: TipsReplica, locale: String? = nil) -> TipContent {
        replica.content(of: definition, locale: locale)
    }
}

extension TipsReplica {
    /// What to show for `definition` now (``Tip/content``, the agent's reports): the server catalog's
    /// tip of that id when it overrides the definition, with the account's experiment variant
    /// (protocol.md §13.12), in `locale` (default: the device's; §13.10).
    public func content(of definition: TipDefinition, locale: String? = nil) -> TipContent {
        TipContent(
            effectiveDefinition(of: definition).content(for: deviceContext.account)
                .localized(for: locale ?? deviceContext.locale))
    }
}
