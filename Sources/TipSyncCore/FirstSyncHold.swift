/// Whether a device that syncs still holds its tips back for its first sync (protocol.md §17.1).
///
/// A replica that has never completed a pull may not yet know that a tip was dismissed, or shown
/// its maximum number of times, on another device. Until its first pull has been merged, or until
/// the bounded wait its sync client started has passed (a device that cannot reach the server
/// still shows onboarding tips), a tip that would be `available` is `pending`, so it is neither
/// shown nor counted as a display.
public struct FirstSyncHold: Sendable, Hashable {
    /// Whether a pull of this replica has reached the end of the account's log at least once.
    public var hasSynced: Bool
    /// Milliseconds since 1970 (the replica's corrected clock) until which tips are held; `nil`:
    /// no sync client has started one (a replica that does not sync holds nothing).
    public var until: Int64?

    public init(hasSynced: Bool = false, until: Int64? = nil) {
        self.hasSynced = hasSynced
        self.until = until
    }

    /// Whether tips are held at `nowMilliseconds`.
    public func holds(atMilliseconds now: Int64) -> Bool {
        guard !hasSynced, let until else { return false }
        return now < until
    }
}
