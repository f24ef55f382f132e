import TipSyncCore

/// What changed from one catalog version to the next, as operators read it: tips added and removed,
/// the fields of each tip that changed (content, rules, options), and the other members that changed.
public struct CatalogDiff: Sendable, Hashable, Codable {
    public var tipsAdded: [String] = []
    public var tipsRemoved: [String] = []
    /// Each changed tip with the members that differ: `title`, `message`, `image`, `actions`,
    /// `rules`, `options`.
    public var tipsChanged: [TipChange] = []
    /// Other catalog members that differ: `displayFrequency`, `parameters`, `events`, `groups`.
    public var otherChanges: [String] = []

    public struct TipChange: Sendable, Hashable, Codable {
        public var tip: String
        public var fields: [String]
    }

    /// The difference from `old` (none: everything in `new` is added) to `new`.
    public init(from old: Catalog?, to new: Catalog) {
        let before = Dictionary((old?.tips ?? []).map { ($0.id, $0) }) { first, _ in first }
        let after = Set(new.tips.map(\.id))
        for tip in new.tips {
            guard let previous = before[tip.id] else {
                tipsAdded.append(tip.id)
                continue
            }
            var fields: [String] = []
            if previous.title != tip.title { fields.append("title") }
            if previous.message != tip.message { fields.append("message") }
            if previous.image != tip.image { fields.append("image") }
            if previous.actions != tip.actions { fields.append("actions") }
            if previous.rules != tip.rules { fields.append("rules") }
            if previous.options != tip.options { fields.append("options") }
            if !fields.isEmpty { tipsChanged.append(TipChange(tip: tip.id, fields: fields)) }
        }
        tipsRemoved = (old?.tips ?? []).map(\.id).filter { !after.contains($0) }
        if old?.displayFrequency != new.displayFrequency { otherChanges.append("displayFrequency") }
        if (old?.parameters ?? []) != new.parameters { otherChanges.append("parameters") }
        if (old?.events ?? []) != new.events { otherChanges.append("events") }
        if (old?.groups ?? []) != new.groups { otherChanges.append("groups") }
    }

    /// The tips a summary names in each list before it counts the rest.
    static let namedInSummary = 10

    /// One line: "added a, b; removed c; changed d (rules, options); displayFrequency" or "no change".
    /// A list longer than ten names its first ten and counts the rest ("… and 7590 more"); the
    /// lists themselves are whole.
    public var summary: String {
        func names(_ list: [String]) -> String {
            let named = list.prefix(Self.namedInSummary).joined(separator: ", ")
            return list.count > Self.namedInSummary ? "\(named) … and \(list.count - Self.namedInSummary) more" : named
        }
        var parts: [String] = []
        if !tipsAdded.isEmpty { parts.append("added " + names(tipsAdded)) }
        if !tipsRemoved.isEmpty { parts.append("removed " + names(tipsRemoved)) }
        if !tipsChanged.isEmpty {
            parts.append("changed " + names(tipsChanged.map { "\($0.tip) (\($0.fields.joined(separator: ", ")))" }))
        }
        parts += otherChanges
        return parts.isEmpty ? "no change" : parts.joined(separator: "; ")
    }
}
