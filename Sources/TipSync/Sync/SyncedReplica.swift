package import Foundation
import TipSyncCore

/// The replica's sync face: everything a ``SyncClient`` reads from and writes to the replica it
/// syncs, and nothing else. ``TipsReplica`` is the replica apps use; a client in a test or a
/// simulation can sync any other type that keeps these promises.
///
/// Four concerns, each kept in the replica so a restart resumes where it stopped:
/// - **who syncs**: the device name and its physical clock;
/// - **the bookkeeping** (``SyncProgress``: what the server acknowledged, the pull cursor, the clock
///   correction, the first-sync hold), changed in one transaction per server answer;
/// - **what goes out**: the device's own log after the last acknowledged change, and the three
///   repairs a server's answer can call for (numbering after a log the server already holds, a
///   change set aside, new stamps after a far-future clock);
/// - **what comes in**: pulled pages merged together with the bookkeeping they settle, the server's
///   catalog, the account's name.
package protocol SyncedReplica: AnyObject, Sendable {
    // MARK: Who syncs

    /// The device's name on the server (protocol.md §2).
    var deviceID: String { get }
    /// The device's physical clock, uncorrected (the client measures the correction against it).
    var clock: TipsClock { get }

    // MARK: The bookkeeping

    /// The bookkeeping as stored now.
    var syncProgress: SyncProgress { get throws }
    /// Changes the bookkeeping in one transaction (what one server answer settles) and applies a
    /// changed clock correction and first-sync hold at once.
    @discardableResult
    func updateSyncProgress<Result>(_ update: (inout SyncProgress) throws -> Result) throws -> Result
    /// Milliseconds added to the device clock to match the server's (``SyncProgress/clockOffset``).
    var clockOffset: Int64 { get }
    /// Whether a pull has ever reached the end of the account's log.
    var hasSynced: Bool { get }
    /// Whether tips are held for the first sync now (protocol.md §17.1).
    var isHeldForFirstSync: Bool { get }
    /// Starts the first-sync hold for at most `seconds`, unless the replica has synced; returns
    /// whether tips are held.
    @discardableResult
    func holdForFirstSync(seconds: Double) throws -> Bool

    // MARK: What goes out

    /// The sequence number of the device's latest change (0 before any).
    var lastLocalSeq: Int64 { get throws }
    /// The device's changes the server has not acknowledged, oldest first: at most `limit`, and no
    /// more than `bytes` of their canonical JSON texts with a comma between each — but at least one
    /// (a push reads no more than it can carry, ``PushRequest/maxClientChangesBytes``).
    func outbox(limit: Int, bytes: Int) throws -> [Change]
    /// Yields after each local change is committed (what wakes the push loop), until dropped.
    func localChangeNotifications() -> AsyncStream<Void>
    /// Numbers the device's changes after `highestSeq`, the server's log of this device name
    /// (protocol.md §7, "A device whose storage was lost").
    func continueDeviceLog(after highestSeq: Int64) throws
    /// Takes change `seq` out of the log when no server can hold it (protocol.md §17.2); `nil` when it
    /// may be on a server.
    func setAsideUnsentChange(seq: Int64) throws -> Change?
    /// New stamps from the corrected clock for every change after `keep` not yet acknowledged
    /// (protocol.md §11).
    func restampUnacknowledgedChanges(keepingThrough keep: Int64) throws

    // MARK: What comes in

    /// Merges pulled changes and, in the same transaction, the bookkeeping they settle.
    func applyRemote<Result: Sendable>(
        _ changes: [Change], updatingSyncProgress update: (inout SyncProgress) throws -> Result
    ) throws -> Result
    /// The account's name, once known (what rollout buckets hash).
    var account: String? { get }
    /// What targeting reads of this device; its platform, app version and locale are reported to
    /// the server with each request (``TipSyncCore/DeviceContext/headerValue``).
    var deviceContext: DeviceContext { get }
    /// Records the account's name.
    func setAccount(_ name: String) throws
    /// The version (`ETag`) of the server catalog applied last, if any.
    var serverCatalogTag: String? { get throws }
    /// Validates and applies a catalog the server delivered (protocol.md §16).
    @discardableResult
    func applyServerCatalog(_ text: Data, tag: String) throws -> Catalog
}

extension SyncedReplica {
    /// The device's changes the server has not acknowledged, oldest first, at most `limit`.
    package func outbox(limit: Int) throws -> [Change] { try outbox(limit: limit, bytes: .max) }
}

extension TipsReplica: SyncedReplica {
    /// The account's name, once known (``DeviceContext/account``).
    public var account: String? { deviceContext.account }
}
