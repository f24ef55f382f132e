/// A tip catalog: tips, parameters, events, groups and display frequency as one JSON document,
/// so devices that are not Swift programs evaluate the same tips. Format: `README.md`, "Catalog files".
public struct Catalog: Sendable, Hashable, Codable {
    public var displayFrequency: DisplayFrequency?
    public var parameters: [ParameterDefinition]
    public var events: [EventDefinition]
    public var tips: [TipDefinition]
    public var groups: [TipGroupDefinition]

    public init(
        displayFrequency: DisplayFrequency? = nil, parameters: [ParameterDefinition] = [],
        events: [EventDefinition] = [],
        tips: [TipDefinition] = [], groups: [TipGroupDefinition] = []
    ) {
        self.displayFrequency = displayFrequency
        self.parameters = parameters
        self.events = events
        self.tips = tips
        self.groups = groups
    }

    private enum CodingKeys: String, CodingKey { case displayFrequency, parameters, events, tips, groups }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        displayFrequency = try container.decodeIfPresent(DisplayFrequency.self, forKey: .displayFrequency)
        parameters = try container.decodeIfPresent([ParameterDefinition].self, forKey: .parameters) ?? []
        events = try container.decodeIfPresent([EventDefinition].self, forKey: .events) ?? []
        tips = try container.decodeIfPresent([TipDefinition].self, forKey: .tips) ?? []
        groups = try container.decodeIfPresent([TipGroupDefinition].self, forKey: .groups) ?? []
    }

    /// Why a catalog is inconsistent.
    public struct ValidationError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Checks ids are unique and every rule names a declared parameter and every group a declared tip.
    public func validate() throws {
        func unique(_ ids: [String], _ what: String) throws {
            var seen = Set<String>()
            for id in ids where !seen.insert(id).inserted {
                throw ValidationError(description: "duplicate \(what) id '\(id)'")
            }
        }
        try unique(tips.map(\.id), "tip")
        try unique(parameters.map(\.id), "parameter")
        try unique(events.map(\.id), "event")
        try unique(groups.map(\.id), "group")
        let parameterIDs = Set(parameters.map(\.id))
        for tip in tips {
            for rule in tip.rules {
                if let missing = rule.parameterIDs.subtracting(parameterIDs).sorted().first {
                    throw ValidationError(description: "tip '\(tip.id)' uses undeclared parameter '\(missing)'")
                }
            }
        }
        let tipIDs = Set(tips.map(\.id))
        for group in groups {
            if let missing = group.tips.first(where: { !tipIDs.contains($0) }) {
                throw ValidationError(description: "group '\(group.id)' names unknown tip '\(missing)'")
            }
        }
    }
}
