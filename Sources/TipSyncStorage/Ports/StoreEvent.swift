import TipSyncServerBasics

/// What one server instance tells the others through the database (PostgreSQL `NOTIFY`), so that
/// live connections on every instance react within milliseconds.
package enum StoreEvent: Sendable, Hashable {
    /// The account's log grew: its devices pull.
    case changes(account: Int64)
    /// A device's tokens were revoked: its open streams end.
    case revoked(account: Int64, device: String)
    /// The account was erased: every stream of it ends.
    case erased(account: Int64)
    /// A catalog was uploaded: every device is told (`event: catalog`, long-polls answer) and each
    /// instance reads its new version.
    case catalog
    /// This instance now hears every other instance's events (its `LISTEN` is in place, at start or
    /// after the listening connection dropped). Events before may have been missed, so every stream
    /// and long-poll open on this instance ends: its client reconnects, is authenticated again, and
    /// pulls. Never sent between instances.
    case watching

    /// The notification payload: `123`, `r:123:phone` or `e:123`.
    package var payload: String {
        switch self {
        case .changes(let account): String(account)
        case .revoked(let account, let device): "r:\(account):\(device)"
        case .erased(let account): "e:\(account)"
        case .catalog: "c"
        case .watching: "w"
        }
    }

    package init?(payload: String) {
        if let account = Int64(payload) {
            self = .changes(account: account)
            return
        }
        if payload == "c" {
            self = .catalog
            return
        }
        let parts = payload.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        switch (parts.first, parts.count) {
        case ("r", 3):
            guard let account = Int64(parts[1]) else { return nil }
            self = .revoked(account: account, device: String(parts[2]))
        case ("e", 2):
            guard let account = Int64(parts[1]) else { return nil }
            self = .erased(account: account)
        default: return nil
        }
    }
}
