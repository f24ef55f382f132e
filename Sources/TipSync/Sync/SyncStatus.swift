public import Foundation
import TipSyncCore

/// What a sync client can say of its exchange with the server at one moment: whether it reaches
/// the server, whether this device has ever completed a sync, what waits to be pushed, and why the
/// latest attempt failed (PowerSync's `currentStatus` is the model). ``SyncClient/status`` reads it,
/// ``SyncClient/statusUpdates()`` streams it, ``SyncClient/waitForFirstSync(timeout:)`` awaits the first sync.
public struct SyncStatus: Sendable, Equatable {
    /// Where the client's exchange with the server stands (protocol.md §17.4), in the words every
    /// client uses.
    public var state: SyncState = .connecting
    /// The latest exchange with the server succeeded (and, while ``SyncClient/run()`` is active, its
    /// live stream is open): ``state`` is ``SyncState/connected``. Setting it sets ``state``.
    public var isConnected: Bool {
        get { state == .connected }
        set { state = newValue ? .connected : .offline }
    }
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
    /// in plain words, ``SyncClientError/code`` in the protocol's.
    public var lastError: SyncClientError?
    /// While ``state`` is ``SyncState/offline`` or ``SyncState/refused``: when ``SyncClient/run()``
    /// tries again (device clock).
    public var nextAttemptAt: Date?

    public init() {}
}

/// Where a sync client's exchange with the server stands: the same five words in every client
/// (protocol.md §17.4; the JavaScript client's `status.state`, `tipsync-agent sync-status`).
public enum SyncState: String, Sendable, Hashable, CaseIterable {
    /// No answer yet since the client started.
    case connecting
    /// The latest exchange succeeded; while ``SyncClient/run()`` is active, changes arrive live.
    case connected
    /// The server cannot be reached (no connection, no answer, a broken answer); retrying.
    case offline
    /// The server answered with a refusal (a `401`, `403`, `5xx`, `429`…): ``SyncStatus/lastError``
    /// gives its code and message, ``SyncStatus/nextAttemptAt`` when the client tries again.
    case refused
    /// Syncing has ended: the app stopped it, or the server answered what can never change
    /// (`account_erased`, protocol.md §6) — ``SyncStatus/lastError`` says which.
    case stopped
}

extension SyncStatus {
    /// The status as protocol.md §17.4 words it, for logs and programs in other languages (the
    /// agent's `sync-status --json` and its local API): `state`; with a failure, `code`, `message`
    /// and, while retrying, `nextAttemptAt`; `lastSyncedAt` (milliseconds since 1970, or `null`),
    /// `pendingChanges`, `hasSynced`, `heldForFirstSync`.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "state": .string(state.rawValue),
            "hasSynced": .bool(hasSynced),
            "heldForFirstSync": .bool(isHeldForFirstSync),
            "pendingChanges": .int(Int64(pendingChanges)),
            "lastSyncedAt": lastSyncedAt.map { .int(Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? .null,
        ]
        if let lastError {
            members["code"] = .string(lastError.code)
            members["message"] = .string(lastError.description)
        }
        if let nextAttemptAt {
            members["nextAttemptAt"] = .int(Int64((nextAttemptAt.timeIntervalSince1970 * 1000).rounded()))
        }
        return .object(members)
    }

    /// One line for people: the state, what refused and when the next attempt is, the outbox and
    /// the last sync.
    public var summary: String {
        var parts = [state.rawValue]
        if let lastError, state != .connected { parts.append("(\(lastError.code)): \(lastError.description)") }
        if let nextAttemptAt, state == .offline || state == .refused {
            parts.append("next attempt \(nextAttemptAt.formatted(.iso8601))")
        }
        parts.append("\(pendingChanges) change(s) waiting")
        parts.append(lastSyncedAt.map { "last synced \($0.formatted(.iso8601))" } ?? "never synced this run")
        if isHeldForFirstSync { parts.append("tips held for the first sync") }
        return parts.joined(separator: "; ")
    }
}
