/// One catalog for every platform (protocol.md §13.11): tips for all platforms or some, settings per
/// platform, and the operations operators compose it with — merge one platform's part, remove it —
/// written once, here, for the server, the CLI and the console.
import Foundation

extension Catalog {
    /// The catalog as canonical JSON text (protocol.md §1): what the server stores for a catalog it
    /// composed (a merged or removed platform part), read back as this same catalog.
    public var canonicalText: String {
        get throws { try JSONParser.parse(JSONCoding.encoder.encode(self)).canonicalText }
    }

    /// The catalog a device of `platform` applies: the tips whose `platforms` include it (or that
    /// name none), groups without the others, and the platform's settings over the catalog's.
    /// A device that does not know its platform gets only the tips for every platform.
    public func forPlatform(_ platform: String?) -> Catalog {
        guard tips.contains(where: { $0.platforms != nil }) || platformSettings != nil else { return self }
        var catalog = self
        catalog.tips = tips.filter { tip in tip.platforms.map { list in platform.map(list.contains) ?? false } ?? true }
        let kept = Set(catalog.tips.map(\.id))
        catalog.groups = groups.map { group in
            var group = group
            group.tips = group.tips.filter(kept.contains)
            return group
        }
        if let platform, let settings = platformSettings?[platform], let frequency = settings.displayFrequency {
            catalog.displayFrequency = frequency
        }
        return catalog
    }

    /// Why a platform's part cannot be merged.
    public struct CompositionError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// This catalog with `part` as `platform`'s part (`PUT /admin/v1/catalog/platforms/{platform}`):
    /// the tips that were for `platform` alone are replaced by `part`'s tips, each for `platform`
    /// unless it names its platforms; tips for other platforms or for all stay; `part`'s display
    /// frequency becomes `platform`'s setting; its parameters, events and groups are added. Refused,
    /// naming the field, when a tip of `part` has the id of a tip that stays, or a parameter or event
    /// is declared differently from the catalog's.
    public func merging(_ part: Catalog, as platform: String) throws(CompositionError) -> Catalog {
        var result = removingPlatform(platform, keepingShared: true)
        let staying = Dictionary(result.tips.enumerated().map { ($1.id, $0) }) { first, _ in first }
        for (index, tip) in part.tips.enumerated() {
            if let other = staying[tip.id] {
                let scope =
                    result.tips[other].platforms.map { "for " + $0.joined(separator: ", ") } ?? "for every platform"
                throw CompositionError(
                    description:
                        "tips[\(index)].id: '\(tip.id)' is already a tip \(scope); remove it from the catalog first, "
                        + "or replace the whole catalog with PUT /admin/v1/catalog")
            }
            var tip = tip
            if tip.platforms == nil { tip.platforms = [platform] }
            result.tips.append(tip)
        }
        try Self.add(
            part.parameters, to: &result.parameters, id: \.id, member: "parameters", differing: "default or transience")
        try Self.add(part.events, to: &result.events, id: \.id, member: "events", differing: "donation limit")
        for group in part.groups {
            result.groups.removeAll { $0.id == group.id }
            result.groups.append(group)
        }
        if let frequency = part.displayFrequency {
            var settings = result.platformSettings ?? [:]
            settings[platform, default: PlatformSettings()].displayFrequency = frequency
            result.platformSettings = settings
        }
        return result
    }

    /// Adds a part's declarations (parameters or events) to the catalog's: a new id is added, one the
    /// catalog declares must be declared alike, else the part is refused naming `member[index]`.
    private static func add<Declaration: Equatable>(
        _ declarations: [Declaration], to existing: inout [Declaration], id: (Declaration) -> String,
        member: String, differing: String
    ) throws(CompositionError) {
        for (index, declaration) in declarations.enumerated() {
            guard let found = existing.first(where: { id($0) == id(declaration) }) else {
                existing.append(declaration)
                continue
            }
            guard found == declaration else {
                throw CompositionError(
                    description:
                        "\(member)[\(index)]: '\(id(declaration))' is already declared with another \(differing); declare it alike on every platform"
                )
            }
        }
    }

    /// What uploading `new` as the whole catalog in place of this one would remove of the parts
    /// platforms merged (protocol.md §13.11): each tip for some platforms only that `new` does not
    /// hold (`widgets (ios)`), and each platform's settings that `new` does not hold
    /// (`platformSettings.ios`). Empty: replacing this catalog with `new` loses no platform's part,
    /// and the upload is taken as it is; otherwise it is refused naming these unless the operator
    /// says to replace everything (issue 73, item 1).
    public func platformPartsRemoved(by new: Catalog) -> [String] {
        let kept = Set(new.tips.map(\.id))
        var removed = tips.compactMap { tip -> String? in
            guard let platforms = tip.platforms, !kept.contains(tip.id) else { return nil }
            return "\(tip.id) (\(platforms.joined(separator: ", ")))"
        }
        for platform in (platformSettings ?? [:]).keys.sorted() where new.platformSettings?[platform] == nil {
            removed.append("platformSettings.\(platform)")
        }
        return removed
    }

    /// This catalog without `platform`'s part (`DELETE /admin/v1/catalog/platforms/{platform}`): the
    /// tips for `platform` alone and its settings go; a tip for several platforms loses `platform`
    /// from its list (`keepingShared`: it is kept as it is, for a merge that replaces the part);
    /// groups lose the tips that went. Parameters and events stay.
    public func removingPlatform(_ platform: String, keepingShared: Bool = false) -> Catalog {
        var catalog = self
        catalog.tips = tips.compactMap { tip in
            guard var platforms = tip.platforms, platforms.contains(platform) else { return tip }
            if platforms == [platform] { return nil }
            if keepingShared { return tip }
            platforms.removeAll { $0 == platform }
            var tip = tip
            tip.platforms = platforms
            return tip
        }
        let kept = Set(catalog.tips.map(\.id))
        catalog.groups = groups.map { group in
            var group = group
            group.tips = group.tips.filter(kept.contains)
            return group
        }
        catalog.platformSettings?[platform] = nil
        if catalog.platformSettings?.isEmpty == true { catalog.platformSettings = nil }
        return catalog
    }
}
