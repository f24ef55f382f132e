import Foundation

/// What a sync client can say of its exchange with the server at one moment: whether it reaches
/// the server, whether this device has ever completed a sync, what waits to be pushed, and why the
/// latest attempt failed (PowerSync's `currentStatus` is the model). ``SyncClient/status`` reads it,
/// ``SyncClient/statusUpdates()`` streams it, ``SyncClient/waitForFirstSync(timeout:)`` awaits the first sync.
public struct SyncStatus: Sendable, Equatable {
    /// The latest exchange with the server succeeded (and, while ``SyncClient/run()`` is active, its
    /// live stream is open); `false` before the first answer and after a failure.
    public var isConnected = false
    /// A pull has reached the end of the account's log at least once (``SyncProgress/hasSynced``).
    public var hasSynced = false
    /// Tips that would be available are held back: the first sync is not done and its bounded wait
    /// has not passed (protocol.md §17.1).
    public var isHeldForFirstSync = false
    /// Local changes the server has not acknowledged yet.
    public var pendingChanges = 0
    /// When the latest pull page or live page was merged (device clock).
    public var lastSyncedAt: Date?
    /// Why the latest attempt failed, until one succeeds; ``SyncClientError/description`` says it
    /// in plain words.
    public var lastError: SyncClientError?

    public init() {}
}
