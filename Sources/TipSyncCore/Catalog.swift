/// A tip catalog: tips, parameters, events, groups and display frequency as one JSON document,
/// so devices that are not Swift programs evaluate the same tips. Format: `README.md`, "Catalog files".
public struct Catalog: Sendable, Hashable, Codable {
    public var displayFrequency: DisplayFrequency?
    public var parameters: [ParameterDefinition]
    public var events: [EventDefinition]
    public var tips: [TipDefinition]
    public var groups: [TipGroupDefinition]
    /// `false` turns every tip off at once (protocol.md §13.8); absent: on.
    public var enabled: Bool?
    /// Settings of one platform's devices, by platform (protocol.md §13.11).
    public var platformSettings: [String: PlatformSettings]?

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

    private enum CodingKeys: String, CodingKey {
        case displayFrequency, parameters, events, tips, groups, enabled, platformSettings
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        displayFrequency = try container.decodeIfPresent(DisplayFrequency.self, forKey: .displayFrequency)
        parameters = try container.decodeIfPresent([ParameterDefinition].self, forKey: .parameters) ?? []
        events = try container.decodeIfPresent([EventDefinition].self, forKey: .events) ?? []
        tips = try container.decodeIfPresent([TipDefinition].self, forKey: .tips) ?? []
        groups = try container.decodeIfPresent([TipGroupDefinition].self, forKey: .groups) ?? []
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled)
        platformSettings = try container.decodeIfPresent([String: PlatformSettings].self, forKey: .platformSettings)
    }

    /// Why a catalog is inconsistent.
    public struct ValidationError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Reads a catalog file: JSON text, decoded and validated, every problem reported in protocol
    /// terms with the field's path (`displayFrequency: unknown display frequency 'fortnightly'…`).
    public init(validating data: some Collection<UInt8>) throws(ValidationError) {
        let json: JSONValue
        do {
            json = try JSONParser.parse(data)
        } catch {
            throw ValidationError(description: "\(error)")
        }
        do {
            self = try JSONValueDecoder().decode(Catalog.self, from: json)
        } catch let error as DecodingError {
            let path = error.fieldPath
            throw ValidationError(description: path.isEmpty ? error.reason : "\(path): \(error.reason)")
        } catch {
            throw ValidationError(description: "\(error)")
        }
        try validate()
    }

    /// Checks ids are unique, every rule names a declared parameter and event, every group a declared
    /// tip, and every count, duration and interval is finite and not negative (`protocol.md` §13).
    public func validate() throws(ValidationError) {
        // Counts and seconds lie in 0...2^53 − 1, the number model every client reads exactly (section
        // 1): a catalog one client would refuse is refused here, where it is uploaded.
        let limit = JSONNumberLimits.maxInteger
        func nonNegative(_ value: Double?, _ path: String) throws(ValidationError) {
            guard let value else { return }
            guard value.isFinite, value >= 0, value <= Double(limit) else {
                throw ValidationError(
                    description: "\(path): must be a number of seconds from 0 to \(limit), got \(value)")
            }
        }
        func nonNegative(_ value: Int?, _ path: String) throws(ValidationError) {
            guard let value else { return }
            guard value >= 0, Int64(value) <= limit else {
                throw ValidationError(description: "\(path): must be an integer from 0 to \(limit), got \(value)")
            }
        }
        try nonNegative(displayFrequency?.interval, "displayFrequency")
        for (platform, settings) in (platformSettings ?? [:]).sorted(by: {
            $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
        }) {
            if let problem = Self.platformProblem(platform) {
                throw ValidationError(description: "platformSettings.\(platform): \(problem)")
            }
            try nonNegative(settings.displayFrequency?.interval, "platformSettings.\(platform).displayFrequency")
        }
        for (index, tip) in tips.enumerated() {
            guard let platforms = tip.platforms else { continue }
            guard !platforms.isEmpty else {
                throw ValidationError(
                    description:
                        "tips[\(index)].platforms: list at least one platform, or leave it out for every platform")
            }
            for (position, platform) in platforms.enumerated() {
                if let problem = Self.platformProblem(platform) {
                    throw ValidationError(description: "tips[\(index)].platforms[\(position)]: \(problem)")
                }
                if platforms[..<position].contains(platform) {
                    throw ValidationError(
                        description: "tips[\(index)].platforms[\(position)]: '\(platform)' is listed twice")
                }
            }
        }
        for (index, parameter) in parameters.enumerated() {
            if let violation = parameter.defaultValue.numberViolation(at: "parameters[\(index)].default") {
                throw ValidationError(description: violation.description)
            }
        }
        for (index, event) in events.enumerated() {
            try nonNegative(event.donationLimit?.maximumCount, "events[\(index)].donationLimit.maximumCount")
            try nonNegative(event.donationLimit?.maximumAge, "events[\(index)].donationLimit.maximumAge")
        }
        for (index, tip) in tips.enumerated() {
            try nonNegative(tip.options.maxDisplayCount, "tips[\(index)].options.maxDisplayCount")
            try nonNegative(tip.options.maxDisplayDuration, "tips[\(index)].options.maxDisplayDuration")
        }
        // Ids: not empty, NFC (section 1), unique within their kind (a tip's actions: within the tip);
        // each error names the field.
        func checkIDs(_ ids: [String], _ member: String) throws(ValidationError) {
            var seen: [String: Int] = [:]
            for (index, id) in ids.enumerated() {
                let field = "\(member)[\(index)].id"
                guard !id.isEmpty else { throw ValidationError(description: "\(field): ids are not empty") }
                guard id.isNFC else {
                    throw ValidationError(
                        description: "\(field): '\(id)' is not in Unicode normalization form C (NFC)")
                }
                if let first = seen.updateValue(index, forKey: id) {
                    throw ValidationError(
                        description: "\(field): '\(id)' is already the id of \(member)[\(first)]; ids must be unique")
                }
            }
        }
        try checkIDs(tips.map(\.id), "tips")
        try checkIDs(parameters.map(\.id), "parameters")
        try checkIDs(events.map(\.id), "events")
        try checkIDs(groups.map(\.id), "groups")
        for (index, tip) in tips.enumerated() { try checkIDs(tip.actions.map(\.id), "tips[\(index)].actions") }
        // Localizations: keyed by a language tag in canonical case (so lookups are exact), naming
        // only the tip's own actions (protocol.md §13.10).
        for (index, tip) in tips.enumerated() {
            for (tag, localization) in (tip.localizations ?? [:]).sorted(by: {
                $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
            }) {
                let field = "tips[\(index)].localizations.\(tag)"
                let canonical = DeviceContext.canonicalLocale(tag)
                guard !tag.isEmpty, canonical == tag,
                    tag.split(separator: "-", omittingEmptySubsequences: false).allSatisfy({
                        !$0.isEmpty && $0.count <= 8 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
                    })
                else {
                    throw ValidationError(
                        description:
                            "\(field): a localization is keyed by a BCP 47 language tag in canonical case, such as fr or fr-CA"
                            + (canonical != tag && !tag.isEmpty ? " (write '\(canonical)')" : ""))
                }
                let actionIDs = Set(tip.actions.map(\.id))
                if let unknown = (localization.actions ?? [:]).keys.sorted(by: {
                    $0.utf8.lexicographicallyPrecedes($1.utf8)
                })
                .first(where: { !actionIDs.contains($0) }) {
                    throw ValidationError(
                        description: "\(field).actions.\(unknown): names no action of tips[\(index)]")
                }
            }
        }
        let parameterIDs = Set(parameters.map(\.id))
        let eventIDs = Set(events.map(\.id))
        for (tipIndex, tip) in tips.enumerated() {
            for (member, rules) in [("rules", tip.rules), ("targeting", tip.targeting ?? [])] {
                for (ruleIndex, rule) in rules.enumerated() {
                    let field = "tips[\(tipIndex)].\(member)[\(ruleIndex)]"
                    if let missing = rule.parameterIDs.filter({ !$0.isNFC || !parameterIDs.contains($0) }).sorted()
                        .first
                    {
                        throw ValidationError(
                            description:
                                "\(field): reads parameter '\(missing)', which the catalog's parameters do not declare")
                    }
                    if let missing = rule.eventIDs.filter({ !$0.isNFC || !eventIDs.contains($0) }).sorted().first {
                        throw ValidationError(
                            description: "\(field): reads event '\(missing)', which the catalog's events do not declare"
                        )
                    }
                }
            }
        }
        var experimentIDs: [String: Int] = [:]
        for (index, tip) in tips.enumerated() {
            guard let experiment = tip.experiment else { continue }
            try experiment.validate(at: "tips[\(index)].experiment", eventIDs: eventIDs)
            if let first = experimentIDs.updateValue(index, forKey: experiment.id) {
                throw ValidationError(
                    description:
                        "tips[\(index)].experiment.id: '\(experiment.id)' is already the id of tips[\(first)].experiment; ids must be unique"
                )
            }
        }
        let tipIDs = Set(tips.map(\.id))
        for (groupIndex, group) in groups.enumerated() {
            if let index = group.tips.firstIndex(where: { !$0.isNFC || !tipIDs.contains($0) }) {
                throw ValidationError(
                    description:
                        "groups[\(groupIndex)].tips[\(index)]: names tip '\(group.tips[index])', which the catalog's tips do not declare"
                )
            }
        }
    }
}

extension Catalog {
    /// Why `name` cannot name a platform (protocol.md §13.11): 1 to 32 lowercase ASCII letters,
    /// digits and `-`, as `ios`, `macos`, `web`, `android-tv`.
    public static func platformProblem(_ name: String) -> String? {
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d }
        return !name.isEmpty && name.utf8.count <= 32 && allowed
            ? nil : "a platform is 1 to 32 lowercase letters, digits and '-', such as ios, macos or web; got '\(name)'"
    }

    /// Each event's donation limit, for ``ReplicaState/apply(_:donationLimits:)`` and rule evaluation.
    public var donationLimits: [String: DonationLimit] {
        Dictionary(events.compactMap { event in event.donationLimit.map { (event.id, $0) } }) { first, _ in first }
    }
}
