/// The value of a tip's invalidation register: written only by `invalidate(reason:)`,
/// `resetEligibility()` and `resetDatastore()`, never by displays or donations.
public enum EligibilityState: Sendable, Hashable {
    /// The tip was invalidated; it stays so on every device until a later reset.
    case invalidated(InvalidationReason)
    /// `resetEligibility()` brought the tip back and started a new display-count epoch.
    case eligible
}
