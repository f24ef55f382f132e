public import Foundation
public import TipSyncCore

/// A multi-device history the replayer runs: devices with their clock offsets, a catalog, and the
/// steps — operations, sync exchanges, faults, time. The JSON format is documented in HISTORY.md.
public struct History: Codable, Hashable, Sendable {
    /// Always `"tipsync-history"`.
    public var format = "tipsync-history"
    public var version = 1
    /// The generator seed this history came from, if any (for reproducing).
    public var seed: UInt64?
    /// What the history shows (fixtures say which classic case they are).
    public var description: String?
    /// Simulated time at the start, in milliseconds since 1970 (the server's clock).
    public var start: Int64 = 1_800_000_000_000
    public var devices: [Device]
    /// The tips, parameters and events every device knows; `nil`: ``History/defaultCatalog``.
    public var catalog: Catalog?
    public var steps: [HistoryStep]

    public struct Device: Codable, Hashable, Sendable {
        public var id: String
        /// Milliseconds this device's clock is ahead (negative: behind) of the server's.
        public var clockOffset: Int64

        public init(id: String, clockOffset: Int64 = 0) {
            self.id = id
            self.clockOffset = clockOffset
        }

        private enum CodingKeys: String, CodingKey { case id, clockOffset }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            clockOffset = try container.decodeIfPresent(Int64.self, forKey: .clockOffset) ?? 0
        }
    }

    public init(
        seed: UInt64? = nil, description: String? = nil, devices: [Device], catalog: Catalog? = nil,
        steps: [HistoryStep]
    ) {
        self.seed = seed
        self.description = description
        self.devices = devices
        self.catalog = catalog
        self.steps = steps
    }

    private enum CodingKeys: String, CodingKey {
        case format, version, seed, description, start, devices, catalog, steps
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(String.self, forKey: .format)
        guard format == "tipsync-history" else {
            throw DecodingError.dataCorruptedError(
                forKey: .format, in: container, debugDescription: "format must be \"tipsync-history\"")
        }
        version = try container.decode(Int.self, forKey: .version)
        guard version == 1 else {
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: container, debugDescription: "only version 1 is known")
        }
        seed = try container.decodeIfPresent(UInt64.self, forKey: .seed)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        start = try container.decodeIfPresent(Int64.self, forKey: .start) ?? 1_800_000_000_000
        devices = try container.decode([Device].self, forKey: .devices)
        catalog = try container.decodeIfPresent(Catalog.self, forKey: .catalog)
        steps = try container.decode([HistoryStep].self, forKey: .steps)
    }

    /// Reads a history file.
    public static func load(_ url: URL) throws -> History {
        try JSONDecoder().decode(History.self, from: Data(contentsOf: url))
    }

    /// Pretty JSON, one step per line.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func line<T: Encodable>(_ value: T) -> String { String(decoding: try! encoder.encode(value), as: UTF8.self) }
        var parts = [#"  "format": "tipsync-history""#, #"  "version": 1"#]
        if let seed { parts.append(#"  "seed": \#(seed)"#) }
        if let description { parts.append(#"  "description": \#(line(description))"#) }
        parts.append(#"  "start": \#(start)"#)
        parts.append(#"  "devices": \#(line(devices))"#)
        if let catalog { parts.append(#"  "catalog": \#(line(catalog))"#) }
        parts.append(#"  "steps": [\#n    "# + steps.map(line).joined(separator: ",\n    ") + "\n  ]")
        return "{\n" + parts.joined(separator: ",\n") + "\n}\n"
    }

    /// The catalog simulations use unless a history brings its own: tips whose status depends on
    /// every kind of record (eligibility, display counts, parameters, donations).
    public static let defaultCatalog = Catalog(
        parameters: [
            ParameterDefinition(id: "level", defaultValue: .int(0)),
            ParameterDefinition(id: "plan", defaultValue: .string("free")),
        ],
        events: [
            EventDefinition(id: "opened"),
            // A donation limit, so trimming meets deletions, resets and compaction in every history.
            EventDefinition(id: "viewed", donationLimit: DonationLimit(maximumCount: 3)),
        ],
        tips: [
            TipDefinition(id: "plain", title: "No rules"),
            TipDefinition(id: "twice", title: "Max two displays", options: TipOptions(maxDisplayCount: 2)),
            TipDefinition(
                id: "counted", title: "Needs three opens",
                rules: [.compare(.greaterOrEqual, .count(.donations("opened")), .literal(.int(3)))]),
            TipDefinition(
                id: "viewed-twice", title: "Needs two of the three latest views",
                rules: [.compare(.greaterOrEqual, .count(.donations("viewed")), .literal(.int(2)))]),
            TipDefinition(
                id: "leveled", title: "Needs level 2 on the free plan",
                rules: [
                    .compare(.greaterOrEqual, .parameter("level"), .literal(.int(2))),
                    .compare(.equal, .parameter("plan"), .literal(.string("free"))),
                ], options: TipOptions(maxDisplayDuration: 10)),
        ])
}
