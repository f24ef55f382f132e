import Foundation
package import TipSyncCore
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// What changed from one catalog version to the next, as operators read it: tips added and removed,
/// the members of each tip that changed, and the other members of the catalog that changed — every
/// member devices evaluate or show, by its name in the catalog format (protocol.md §13), found by
/// comparing the members as they are encoded, so a member added to the model is never left out
/// (issue 73, item 2: an off switch, a translation and an experiment's start were each "no change").
package struct CatalogDiff: Sendable, Hashable, Codable {
    package var tipsAdded: [String] = []
    package var tipsRemoved: [String] = []
    /// Each changed tip with the members that differ (`title`, `enabled`, `localizations`,
    /// `experiment`, …), in the order the tip's model declares them.
    package var tipsChanged: [TipChange] = []
    /// Other catalog members that differ (`enabled`, `displayFrequency`, `platformSettings`,
    /// `parameters`, `events`, `groups`, …), in the order the catalog's model declares them.
    package var otherChanges: [String] = []

    package struct TipChange: Sendable, Hashable, Codable {
        package var tip: String
        package var fields: [String]
    }

    /// The difference from `old` (none: everything in `new` is added) to `new`.
    package init(from old: Catalog?, to new: Catalog) {
        let before = Dictionary((old?.tips ?? []).map { ($0.id, $0) }) { first, _ in first }
        let after = Set(new.tips.map(\.id))
        for tip in new.tips {
            guard let previous = before[tip.id] else {
                tipsAdded.append(tip.id)
                continue
            }
            let fields = Self.changedMembers(previous, tip, ignoring: ["id"])
            if !fields.isEmpty { tipsChanged.append(TipChange(tip: tip.id, fields: fields)) }
        }
        tipsRemoved = (old?.tips ?? []).map(\.id).filter { !after.contains($0) }
        otherChanges = Self.changedMembers(old ?? Catalog(), new, ignoring: ["tips"])
    }

    /// The members of `old` and `new` (both of one model type) whose encoded values differ — a
    /// member present in one and absent from the other differs too — in the order the model
    /// declares its properties, then any other encoded member by name.
    static func changedMembers<Model: Encodable>(_ old: Model, _ new: Model, ignoring: Set<String>) -> [String] {
        let before = members(old)
        let after = members(new)
        let changed = Set(before.keys).union(after.keys).subtracting(ignoring).filter { before[$0] != after[$0] }
        let declared = Mirror(reflecting: new).children.compactMap(\.label)
        return declared.filter(changed.contains) + changed.subtracting(declared).sorted()
    }

    /// A model's members as encoded (the catalog format's names and values).
    package static func members(_ model: some Encodable) -> [String: JSONValue] {
        guard let data = try? JSONCoding.encoder.encode(model), case .object(let members)? = try? JSONParser.parse(data)
        else { return [:] }
        return members
    }

    /// The tips a summary names in each list before it counts the rest.
    static let namedInSummary = 10

    /// One line: "added a, b; removed c; changed d (rules, options); displayFrequency" or "no change".
    /// A list longer than ten names its first ten and counts the rest ("… and 7590 more"); the
    /// lists themselves are whole.
    package var summary: String {
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
