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
        func nonNegative(_ value: Double?, _ path: String) throws(ValidationError) {
            guard let value else { return }
            guard value.isFinite, value >= 0 else {
                throw ValidationError(description: "\(path): must be a number of seconds, 0 or more, got \(value)")
            }
        }
        func nonNegative(_ value: Int?, _ path: String) throws(ValidationError) {
            guard let value else { return }
            guard value >= 0 else { throw ValidationError(description: "\(path): must be 0 or more, got \(value)") }
        }
        try nonNegative(displayFrequency?.interval, "displayFrequency")
        for (index, event) in events.enumerated() {
            try nonNegative(event.donationLimit?.maximumCount, "events[\(index)].donationLimit.maximumCount")
            try nonNegative(event.donationLimit?.maximumAge, "events[\(index)].donationLimit.maximumAge")
        }
        for (index, tip) in tips.enumerated() {
            try nonNegative(tip.options.maxDisplayCount, "tips[\(index)].options.maxDisplayCount")
            try nonNegative(tip.options.maxDisplayDuration, "tips[\(index)].options.maxDisplayDuration")
        }
        func unique(_ ids: [String], _ what: String) throws(ValidationError) {
            var seen = Set<String>()
            for id in ids where !seen.insert(id).inserted {
                throw ValidationError(description: "duplicate \(what) id '\(id)'")
            }
        }
        for (what, ids) in [("tip", tips.map(\.id)), ("parameter", parameters.map(\.id)), ("event", events.map(\.id))] {
            if let id = ids.first(where: { !$0.isNFC }) {
                throw ValidationError(description: "\(what) id '\(id)' is not in Unicode normalization form C (NFC)")
            }
        }
        try unique(tips.map(\.id), "tip")
        try unique(parameters.map(\.id), "parameter")
        try unique(events.map(\.id), "event")
        try unique(groups.map(\.id), "group")
        let parameterIDs = Set(parameters.map(\.id))
        let eventIDs = Set(events.map(\.id))
        for tip in tips {
            for rule in tip.rules {
                if let missing = rule.parameterIDs.subtracting(parameterIDs).sorted().first {
                    throw ValidationError(description: "tip '\(tip.id)' uses undeclared parameter '\(missing)'")
                }
                if let missing = rule.eventIDs.subtracting(eventIDs).sorted().first {
                    throw ValidationError(description: "tip '\(tip.id)' uses undeclared event '\(missing)'")
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

extension Catalog {
    /// Each event's donation limit, for ``ReplicaState/apply(_:donationLimits:)`` and rule evaluation.
    public var donationLimits: [String: DonationLimit] {
        Dictionary(events.compactMap { event in event.donationLimit.map { (event.id, $0) } }) { first, _ in first }
    }
}
