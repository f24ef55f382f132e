/// The app-wide throttle: after any tip displays, no tip that has never appeared becomes available
/// until `interval` seconds have passed. Tips that already appeared keep appearing while their rules hold.
public struct DisplayFrequency: Sendable, Hashable, Codable {
    /// Seconds; 0 means no throttle.
    public var interval: Double

    public init(interval: Double) {
        self.interval = interval
    }

    public static let immediate = DisplayFrequency(interval: 0)
    public static let hourly = DisplayFrequency(interval: 3_600)
    public static let daily = DisplayFrequency(interval: 86_400)
    public static let weekly = DisplayFrequency(interval: 604_800)
    public static let monthly = DisplayFrequency(interval: 2_592_000)
    /// A custom interval in seconds.
    public static func custom(_ seconds: Double) -> DisplayFrequency { DisplayFrequency(interval: seconds) }

    static let names: [String: DisplayFrequency] = [
        "immediate": .immediate, "hourly": .hourly, "daily": .daily, "weekly": .weekly, "monthly": .monthly,
    ]

    /// JSON: `"immediate"`, `"hourly"`, `"daily"`, `"weekly"`, `"monthly"`, or a number of seconds.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let seconds = try? container.decode(Double.self) {
            self.init(interval: seconds)
        } else {
            let name = try container.decode(String.self)
            guard let value = Self.names[name] else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription:
                        "unknown display frequency '\(name)'; use immediate, hourly, daily, weekly, monthly or seconds")
            }
            self = value
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let name = Self.names.first(where: { $0.value == self })?.key {
            try container.encode(name)
        } else {
            try container.encode(interval)
        }
    }
}
