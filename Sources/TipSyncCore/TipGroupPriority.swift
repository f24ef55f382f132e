/// How a tip group picks its current tip (TipKit's `TipGroup.Priority`).
public enum TipGroupPriority: String, Sendable, Hashable, Codable, CaseIterable {
    /// A tip shows only once every earlier tip in the group is invalidated.
    case ordered
    /// The first available tip shows.
    case firstAvailable

    /// Refuses an unknown priority in catalog terms (`groups[0].priority: unknown group priority …`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let priority = Self(rawValue: text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "unknown group priority '\(text)'; expected "
                    + Self.allCases.map(\.rawValue).joined(separator: " or "))
        }
        self = priority
    }
}

/// A tip group as data, in a catalog.
public struct TipGroupDefinition: Sendable, Hashable, Codable {
    public var id: String
    public var priority: TipGroupPriority
    public var tips: [String]

    public init(id: String, priority: TipGroupPriority = .ordered, tips: [String]) {
        self.id = id
        self.priority = priority
        self.tips = tips
    }

    private enum CodingKeys: String, CodingKey { case id, priority, tips }

    /// `priority` may be absent: `ordered`, as in `TipGroup`'s initializer (`protocol.md` §13.1).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        priority = try container.decodeIfPresent(TipGroupPriority.self, forKey: .priority) ?? .ordered
        tips = try container.decode([String].self, forKey: .tips)
    }
}
