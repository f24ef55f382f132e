/// Whether a tip should show, with TipKit's cases.
public enum TipStatus: Sendable, Hashable {
    /// Not eligible yet: a rule does not hold, display frequency throttles it, or a test override hides it.
    case pending
    /// Should display now.
    case available
    /// Will not display again until `resetEligibility()` or `resetDatastore()`.
    case invalidated(InvalidationReason)
}

extension TipStatus: CustomStringConvertible {
    /// `available`, `pending`, or `invalidated(tipClosed)`: the words protocol.md and every client
    /// use, for `print(status)`.
    public var description: String {
        switch self {
        case .available: "available"
        case .pending: "pending"
        case .invalidated(let reason): "invalidated(\(reason.rawValue))"
        }
    }
}

extension TipStatus {
    /// The protocol's spelling (conformance vectors, explanations): `available`, `pending` or
    /// `invalidated:tipClosed`.
    public var protocolName: String {
        switch self {
        case .available: "available"
        case .pending: "pending"
        case .invalidated(let reason): "invalidated:\(reason.rawValue)"
        }
    }
}
