/// Whether a tip should show, with TipKit's cases.
public enum TipStatus: Sendable, Hashable {
    /// Not eligible yet: a rule does not hold, display frequency throttles it, or a test override hides it.
    case pending
    /// Should display now.
    case available
    /// Will not display again until `resetEligibility()` or `resetDatastore()`.
    case invalidated(InvalidationReason)
}
