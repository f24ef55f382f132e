/// A tip as data: what the Swift `Tip` protocol and catalog files both reduce to.
public struct TipDefinition: Sendable, Hashable, Codable {
    public var id: String
    public var title: String
    public var message: String?
    public var image: String?
    public var actions: [ActionDefinition]
    /// All must hold (AND). No rules: eligible until invalidated.
    public var rules: [RuleExpression]
    public var options: TipOptions
    /// `false`: the tip is turned off (pending on every device) until a catalog turns it on again —
    /// the kill switch (protocol.md §13.8). Absent: on.
    public var enabled: Bool?
    /// Conditions on the device and the account (platform, app version, locale, rollout bucket): all
    /// must hold, else the tip is pending there (protocol.md §13.8). Same language as `rules`.
    public var targeting: [RuleExpression]?
    /// The tip's content in other languages, by BCP 47 tag in canonical case (`fr`, `fr-CA`):
    /// ``localized(for:)`` picks through the fallback chain (protocol.md §13.10).
    public var localizations: [String: TipLocalization]?
    /// The platforms the tip is for (`["ios", "macos"]`); absent: every platform (protocol.md §13.11).
    public var platforms: [String]?
    /// A randomized holdout on this tip (protocol.md §13.12); absent: none.
    public var experiment: TipExperiment?

    /// Whether the catalog leaves the tip on.
    public var isEnabled: Bool { enabled ?? true }

    public init(
        id: String, title: String, message: String? = nil, image: String? = nil, actions: [ActionDefinition] = [],
        rules: [RuleExpression] = [], options: TipOptions = TipOptions()
    ) {
        self.id = id
        self.title = title
        self.message = message
        self.image = image
        self.actions = actions
        self.rules = rules
        self.options = options
    }

    private enum CodingKeys: String, CodingKey {
        case id, title, message, image, actions, rules, options, enabled, targeting, localizations, platforms
        case experiment
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        message = try container.decodeIfPresent(String.self, forKey: .message)
        image = try container.decodeIfPresent(String.self, forKey: .image)
        actions = try container.decodeIfPresent([ActionDefinition].self, forKey: .actions) ?? []
        rules = try container.decodeIfPresent([RuleExpression].self, forKey: .rules) ?? []
        options = try container.decodeIfPresent(TipOptions.self, forKey: .options) ?? TipOptions()
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled)
        targeting = try container.decodeIfPresent([RuleExpression].self, forKey: .targeting)
        localizations = try container.decodeIfPresent([String: TipLocalization].self, forKey: .localizations)
        platforms = try container.decodeIfPresent([String].self, forKey: .platforms)
        experiment = try container.decodeIfPresent(TipExperiment.self, forKey: .experiment)
    }

    /// The tip as `account` is shown it: with its variant's content when its running experiment puts
    /// the account in a variant (protocol.md §13.12), else as it is. Localize the result
    /// (``localized(for:)``) for a locale.
    public func content(for account: String?) -> TipDefinition {
        guard let experiment = runningExperiment, let account,
            let variant = experiment.variant(experiment.arm(account: account))
        else { return self }
        var shown = self
        shown.title = variant.title ?? title
        shown.message = variant.message ?? message
        shown.image = variant.image ?? image
        if variant.localizations != nil || variant.title != nil || variant.message != nil || variant.image != nil {
            shown.localizations = variant.localizations
        }
        return shown
    }

    /// The experiment while it runs (not stopped), else `nil`.
    public var runningExperiment: TipExperiment? { experiment?.isRunning == true ? experiment : nil }
}

/// A button on a tip.
public struct ActionDefinition: Sendable, Hashable, Codable {
    public var id: String
    public var title: String

    public init(id: String, title: String) {
        self.id = id
        self.title = title
    }
}

/// TipKit's tip options as data.
public struct TipOptions: Sendable, Hashable, Codable {
    /// After this many displays (summed over devices) the tip is invalidated with `.displayCountExceeded`.
    public var maxDisplayCount: Int?
    /// After this many seconds on screen (summed over devices) it is invalidated with `.displayDurationExceeded`.
    public var maxDisplayDuration: Double?
    /// Bypasses the app-wide display frequency.
    public var ignoresDisplayFrequency: Bool

    public init(maxDisplayCount: Int? = nil, maxDisplayDuration: Double? = nil, ignoresDisplayFrequency: Bool = false) {
        self.maxDisplayCount = maxDisplayCount
        self.maxDisplayDuration = maxDisplayDuration
        self.ignoresDisplayFrequency = ignoresDisplayFrequency
    }

    private enum CodingKeys: String, CodingKey { case maxDisplayCount, maxDisplayDuration, ignoresDisplayFrequency }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        maxDisplayCount = try container.decodeIfPresent(Int.self, forKey: .maxDisplayCount)
        maxDisplayDuration = try container.decodeIfPresent(Double.self, forKey: .maxDisplayDuration)
        ignoresDisplayFrequency = try container.decodeIfPresent(Bool.self, forKey: .ignoresDisplayFrequency) ?? false
    }
}
