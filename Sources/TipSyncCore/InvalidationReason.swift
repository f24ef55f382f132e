/// Why a tip was invalidated, with TipKit's names.
public enum InvalidationReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The person performed the action the tip describes.
    case actionPerformed
    /// The person closed the tip.
    case tipClosed
    /// The engine: the tip reached its `MaxDisplayCount`.
    case displayCountExceeded
    /// The engine: the tip's cumulative on-screen time reached its `MaxDisplayDuration`.
    case displayDurationExceeded
}
