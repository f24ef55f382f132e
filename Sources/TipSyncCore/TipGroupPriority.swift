/// How a tip group picks its current tip (TipKit's `TipGroup.Priority`).
public enum TipGroupPriority: String, Sendable, Hashable, Codable {
    /// A tip shows only once every earlier tip in the group is invalidated.
    case ordered
    /// The first available tip shows.
    case firstAvailable
}

/// A tip group as data, in a catalog.
public struct TipGroupDefinition: Sendable, Hashable, Codable {
    public var id: String
    public var priority: TipGroupPriority
    public var tips: [String]

    public init(id: String, priority: TipGroupPriority, tips: [String]) {
        self.id = id
        self.priority = priority
        self.tips = tips
    }
}
