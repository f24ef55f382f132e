/// The app-wide settings of one platform's part of a catalog (protocol.md §13.11), overriding the
/// catalog's own on devices of that platform: a Swift app's `displayFrequency: "daily"` applies to
/// iOS devices, not to the web.
public struct PlatformSettings: Sendable, Hashable, Codable {
    public var displayFrequency: DisplayFrequency?

    public init(displayFrequency: DisplayFrequency? = nil) {
        self.displayFrequency = displayFrequency
    }
}
