/// A parameter as data: its id, the value it has until written, and whether it is transient
/// (reset to the default at each launch, never persisted or synced).
public struct ParameterDefinition: Sendable, Hashable, Codable {
    public var id: String
    public var defaultValue: JSONValue
    public var isTransient: Bool

    public init(id: String, defaultValue: JSONValue, isTransient: Bool = false) {
        self.id = id
        self.defaultValue = defaultValue
        self.isTransient = isTransient
    }

    private enum CodingKeys: String, CodingKey {
        case id
        case defaultValue = "default"
        case isTransient = "transient"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        defaultValue = try container.decodeIfPresent(JSONValue.self, forKey: .defaultValue) ?? .null
        isTransient = try container.decodeIfPresent(Bool.self, forKey: .isTransient) ?? false
    }
}

/// An event as data: its id and how many donations it keeps.
public struct EventDefinition: Sendable, Hashable, Codable {
    public var id: String
    public var donationLimit: DonationLimit?

    public init(id: String, donationLimit: DonationLimit? = nil) {
        self.id = id
        self.donationLimit = donationLimit
    }
}
