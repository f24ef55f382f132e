import Foundation
import Synchronization
@_exported import TipSyncCore

/// TipKit's namespace: configuration, testing overrides and the types tips are made of.
///
/// `Tips` is a thin facade over one shared ``TipsReplica``; everything it does is also available on
/// replica instances, for tests and programs that run several.
public enum Tips {
    struct Shared {
        var replica: TipsReplica?
        var pendingReset = false
        var overrides = TestingOverrides()
        /// Tip types shown or hidden for testing: TipKit's overrides apply by type, whatever id an
        /// instance gives. Each type's id joins `overrides` when one of its tips is first evaluated.
        var shownTypes: Set<ObjectIdentifier> = []
        var hiddenTypes: Set<ObjectIdentifier> = []
        var syncTask: Task<Void, Never>?
        var syncClient: SyncClient?
    }

    static let shared = Mutex(Shared())

    /// The replica `configure` opened, or `nil` before configuration.
    public static var replica: TipsReplica? { shared.withLock { $0.replica } }

    /// The status of a tip.
    public typealias Status = TipStatus
    /// Why a tip was invalidated.
    public typealias InvalidationReason = TipSyncCore.InvalidationReason

    /// Configures tips for this launch: once, before any tip is used.
    ///
    /// Opens (creating if needed) the replica at the datastore location, applies a pending
    /// `resetDatastore()`, and starts evaluating tips. A second call throws ``TipsError/alreadyConfigured``.
    public static func configure(_ options: [ConfigurationOption] = []) throws {
        var location = ConfigurationOption.DatastoreLocation.applicationDefault
        var frequency = DisplayFrequency.immediate
        var deviceID: String?
        var clock = TipsClock.system
        var sync: SyncConfiguration?
        for option in options {
            switch option.kind {
            case .displayFrequency(let value): frequency = value
            case .datastoreLocation(let value): location = value
            case .deviceID(let value): deviceID = value
            case .clock(let value): clock = value
            case .sync(let value): sync = value
            }
        }
        try shared.withLock { shared in
            guard shared.replica == nil else { throw TipsError.alreadyConfigured }
            let replica = try TipsReplica(directory: try location.directory(), deviceID: deviceID, clock: clock)
            if shared.pendingReset {
                try replica.resetDatastore()
                shared.pendingReset = false
            }
            replica.displayFrequency = frequency
            var overrides = replica.testingOverrides
            overrides.showAll = overrides.showAll || shared.overrides.showAll
            overrides.hideAll = overrides.hideAll || shared.overrides.hideAll
            overrides.shown.formUnion(shared.overrides.shown)
            overrides.hidden.formUnion(shared.overrides.hidden)
            replica.testingOverrides = overrides
            shared.replica = replica
            if let sync {
                // The server catalog received last evaluates tips from the start, offline too.
                if sync.followsServerCatalog { try replica.loadStoredServerCatalog() }
                let client = SyncClient(replica: replica, configuration: sync, transport: sync.transport)
                shared.syncClient = client
                shared.syncTask = Task {
                    do { try await client.run() } catch { Tips.report(error) }
                }
            }
        }
    }

    /// Returns once every change made so far on this device is on the server, or throws why not
    /// (``SyncClientError``; ``TipsError/syncNotConfigured`` without `.sync(…)`).
    ///
    /// The running sync pushes each change within moments anyway; call this where waiting matters —
    /// before the app is suspended (from a background task), or before telling the person "done".
    /// A change that never reached the server is not lost: it stays in the replica's outbox and is
    /// pushed at the next launch.
    public static func syncNow() async throws {
        guard let client = syncClient else {
            throw replica == nil ? TipsError.notConfigured : TipsError.syncNotConfigured
        }
        try await client.pushPending()
    }

    /// Waits until this device has completed its first sync (now or in an earlier launch): `true`,
    /// or `false` when `timeout` passes first. Until then, tips that would be available read
    /// `.pending` for at most ``SyncConfiguration/firstSyncTimeout`` (protocol.md §17.1); an app that
    /// would rather show a spinner than defaults awaits this. Throws without `.sync(…)`.
    public static func waitForFirstSync(timeout: Duration = .seconds(10)) async throws -> Bool {
        guard let client = syncClient else {
            throw replica == nil ? TipsError.notConfigured : TipsError.syncNotConfigured
        }
        return await client.waitForFirstSync(timeout: timeout)
    }

    /// The sync status now (connected, first sync done, changes waiting, the last error); `nil`
    /// without `.sync(…)`. ``SyncClient/statusUpdates()`` streams every change.
    public static var syncStatus: SyncStatus? {
        get async { await syncClient?.status }
    }

    /// The sync client `configure(.sync(…))` started, if any.
    public static var syncClient: SyncClient? { shared.withLock { $0.syncClient } }

    /// Uses an already-open replica as the shared one (instead of `configure`).
    public static func configure(replica: TipsReplica) throws {
        try shared.withLock { shared in
            guard shared.replica == nil else { throw TipsError.alreadyConfigured }
            shared.replica = replica
        }
    }

    /// Detaches the shared replica, so `configure` may be called again (tests, account switches).
    public static func unconfigure() {
        shared.withLock { shared in
            shared.syncTask?.cancel()
            shared = Shared()
        }
    }

    /// Removes every tip, event and parameter record. Call before `configure` (it then happens as the
    /// datastore opens); after `configure` it happens at once. With sync, every device is reset too.
    public static func resetDatastore() throws {
        let replica: TipsReplica? = shared.withLock { shared in
            if shared.replica == nil { shared.pendingReset = true }
            return shared.replica
        }
        try replica?.resetDatastore()
    }

    /// Shows every tip, whatever its rules and status.
    public static func showAllTipsForTesting() { updateOverrides { $0.showAll = true } }

    /// Shows these tips, whatever their rules and status.
    public static func showTipsForTesting(_ tips: [any Tip.Type]) {
        shared.withLock { $0.shownTypes.formUnion(tips.map { ObjectIdentifier($0) }) }
    }

    /// Hides these tips (by type: a tip with a custom `id` is hidden too).
    public static func hideTipsForTesting(_ tips: [any Tip.Type]) {
        shared.withLock { $0.hiddenTypes.formUnion(tips.map { ObjectIdentifier($0) }) }
    }

    /// Binds the type overrides of `type` to the id its tips use, in the shared replica.
    static func applyTypeOverrides(_ type: any Tip.Type, id: String, in replica: TipsReplica) {
        let key = ObjectIdentifier(type)
        let (show, hide) = shared.withLock { shared in
            shared.replica === replica
                ? (shared.shownTypes.contains(key), shared.hiddenTypes.contains(key)) : (false, false)
        }
        guard show || hide else { return }
        var overrides = replica.testingOverrides
        let before = overrides
        if show { overrides.shown.insert(id) }
        if hide { overrides.hidden.insert(id) }
        if overrides != before { replica.testingOverrides = overrides }
    }

    /// Hides every tip.
    public static func hideAllTipsForTesting() { updateOverrides { $0.hideAll = true } }

    static func updateOverrides(_ update: (inout TestingOverrides) -> Void) {
        let replica: TipsReplica? = shared.withLock { shared in
            update(&shared.overrides)
            return shared.replica
        }
        if let replica {
            var overrides = replica.testingOverrides
            update(&overrides)
            replica.testingOverrides = overrides
        }
    }
}
