public import Foundation
import GRDB
import Synchronization
import TipSyncCore

/// One replica: a device's tips engine with its own SQLite store, clock and device id.
///
/// The global ``Tips`` facade is a thin layer over one shared instance; tests and simulators open
/// as many as they like in one process. Every mutation is merged into the in-memory state and
/// written, with its change-log entry, in one SQLite transaction before the call returns.
public final class TipsReplica: Sendable {
    /// This replica's device id: the tie-breaker in last-writer-wins and the owner of its change log.
    public let deviceID: String
    /// Where the replica's files live.
    public let directory: URL
    let database: ReplicaDatabase
    /// Physical time, uncorrected (injectable for tests).
    public let clock: TipsClock
    let core: Mutex<Core>
    let ruleCache = RuleCache()
    let merge: ReplicaMerge
    /// Added to the device clock: the correction sync measured against the server's clock.
    let clockOffsetMilliseconds = Atomic<Int64>(0)
    let localChangeSubscribers = Mutex<[UInt64: AsyncStream<Void>.Continuation]>([:])

    struct Core {
        var state: ReplicaState
        var hlc: HybridLogicalClock
        var nextSeq: Int64
        var parameters: [String: ParameterDefinition] = [:]
        var transientValues: [String: JSONValue] = [:]
        var donationLimits: [String: DonationLimit] = [:]
        /// Events a loaded catalog declares (Swift-declared events register only their limits).
        var catalogEvents: Set<String> = []
        var catalog: [String: TipDefinition] = [:]
        /// Catalog tip ids in the order catalogs declared them (what `status` lists).
        var catalogOrder: [String] = []
        /// The platforms of each catalog tip that is not for this device's platform (protocol.md
        /// §13.11), by id: asked about, it is "not for this platform", not unknown.
        var otherPlatformsTips: [String: [String]] = [:]
        /// Whether the catalog is the server's (``applyServerCatalog(_:tag:)``): its tips then also
        /// override tips declared in code with the same id (rules, options, content).
        var catalogIsServers = false
        var groups: [String: TipGroupDefinition] = [:]
        var displayFrequency: DisplayFrequency = .immediate
        var overrides: TestingOverrides
        var observers: [UInt64: Observer] = [:]
        var nextObserverID: UInt64 = 0
        /// Re-evaluates observers while any exist, so changes that come only from time passing
        /// (a display-frequency throttle ending, a `donatedWithin` window sliding) are emitted too.
        var ticker: Task<Void, Never>?
        /// SQLite's `data_version` on the writer connection when memory last matched the disk; it
        /// moves only when another connection (another process sharing the store) commits.
        var dataVersion: Int64
        /// Whether tips are held for the first sync (the sync bookkeeping's part that status reads).
        var firstSync = FirstSyncHold()
        /// What targeting reads about this device (protocol.md §13.8).
        var deviceContext = DeviceContext.current
        /// `false` while the loaded catalog turns every tip off (its `enabled: false`).
        var tipsEnabled = true

        init(snapshot: ReplicaDatabase.Snapshot, dataVersion: Int64, overrides: TestingOverrides) {
            state = snapshot.state
            hlc = HybridLogicalClock(last: snapshot.latestHLC)
            nextSeq = snapshot.nextSeq
            self.dataVersion = dataVersion
            self.overrides = overrides
        }
    }

    /// How often status streams re-check for changes that come from time passing alone (a display
    /// frequency ending, a `donatedWithin` window sliding, the first-sync hold's bound) and for writes
    /// by another process sharing the store. Each tick wakes a device at rest about three times (the
    /// timer, the database's queue, the evaluation): every two seconds keeps such a device within its
    /// budget of five wake-ups a second (BENCHMARKS.md, "A device at rest").
    public static let timeRefreshInterval: Duration = .seconds(2)

    /// Opens the replica stored in `directory`, creating it if needed.
    ///
    /// - Parameters:
    ///   - deviceID: the id to give a new replica (default: a random UUID); an existing one keeps its own.
    ///   - clock: physical time, injectable for tests.
    ///   - environment: read for testing overrides (`TIPSYNC_SHOW_ALL_TIPS` …).
    deinit {
        core.withLock { $0.ticker?.cancel() }
    }

    public convenience init(
        directory: URL, deviceID: String? = nil, clock: TipsClock = .system,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        try self.init(
            directory: directory, deviceID: deviceID, clock: clock, environment: environment, merge: .standard)
    }

    /// Opens a replica that merges with `merge` (the simulator's broken-merge tests).
    @_spi(Simulation) public init(
        directory: URL, deviceID: String?, clock: TipsClock, environment: [String: String], merge: ReplicaMerge
    ) throws {
        self.merge = merge
        self.directory = directory
        self.clock = clock
        database = try ReplicaDatabase(directory: directory)
        self.deviceID = try database.deviceID(preferred: deviceID)
        let (snapshot, dataVersion) = try database.loadWithVersion()
        core = Mutex(
            Core(snapshot: snapshot, dataVersion: dataVersion, overrides: TestingOverrides(environment: environment)))
        clockOffsetMilliseconds.store(Int64(try database.meta(.clockOffset) ?? "0") ?? 0, ordering: .relaxed)
        let firstSync = try database.writer.read { db in try ReplicaDatabase.syncProgress(db).firstSyncHold }
        let account = try database.meta(.account)
        core.withLock { core in
            core.firstSync = firstSync
            core.deviceContext.account = account
        }
    }

    /// The device clock corrected by the offset sync measured, in milliseconds since 1970.
    var nowMilliseconds: Int64 {
        Int64((clock.now().timeIntervalSince1970 * 1000).rounded(.down))
            + clockOffsetMilliseconds.load(ordering: .relaxed)
    }

    /// The corrected clock as a date (what status evaluation uses).
    var now: Date { Date(timeIntervalSince1970: Double(nowMilliseconds) / 1000) }

    /// A pure evaluator over the current state.
    func evaluator(_ core: borrowing Core) -> StatusEvaluator {
        let now = nowMilliseconds
        var evaluator = StatusEvaluator(
            state: core.state, parameterDefaults: core.parameters.mapValues(\.defaultValue),
            transientValues: core.transientValues, donationLimits: core.donationLimits,
            displayFrequency: core.displayFrequency, overrides: core.overrides,
            now: Double(now) / 1000, ruleCache: ruleCache)
        evaluator.heldForFirstSync = core.firstSync.holds(atMilliseconds: now)
        evaluator.deviceContext = core.deviceContext
        evaluator.tipsEnabled = core.tipsEnabled
        return evaluator
    }

    /// Makes local changes: stamps each operation, merges it, and stores the changes and their
    /// records in one transaction. The transaction holds SQLite's write lock from its start, so
    /// writes another process made to the same store are adopted first and sequence numbers never
    /// collide. On a storage error memory is reloaded from the database, so memory and disk never
    /// disagree.
    @discardableResult
    func commitLocal(_ core: inout Core, _ operations: [Change.Operation]) throws -> [Change] {
        try commitLocal(&core) { _ in operations }
    }

    /// ``commitLocal(_:_:)`` with operations built from the state *after* other processes' writes
    /// are adopted: for operations derived from it (donation ids from the next sequence number,
    /// display counters from the current counter).
    @discardableResult
    func commitLocal(_ core: inout Core, _ makeOperations: (_ current: borrowing Core) -> [Change.Operation]) throws
        -> [Change]
    {
        var changes: [Change] = []
        do {
            try database.writer.write { db in
                try adoptWritesFromElsewhere(&core, db)
                for operation in makeOperations(core) {
                    let hlc = core.hlc.tick(physicalMilliseconds: UInt64(max(0, nowMilliseconds)))
                    let change = Change(
                        device: deviceID, seq: core.nextSeq + Int64(changes.count), hlc: hlc,
                        operation: operation.canonicalNumbers)
                    // What the server would refuse is never written: the whole call fails, nothing stored.
                    if let violation = change.violation
                        ?? Change.sizeViolation(textBytes: change.canonicalJSON.utf8.count)
                    {
                        throw violation
                    }
                    _ = merge.apply(&core.state, change, core.donationLimits)
                    if case .donation(let event, _, _, _) = operation, let limit = core.donationLimits[event] {
                        core.state.trimDonations(of: event, to: limit, nowMilliseconds: nowMilliseconds)
                    }
                    changes.append(change)
                }
                try ReplicaDatabase.persist(changes, local: true, state: core.state, limits: core.donationLimits, db)
            }
        } catch {
            reloadAfterFailure(&core)
            throw error
        }
        core.nextSeq += Int64(changes.count)
        notifyObservers(&core)
        for subscriber in localChangeSubscribers.withLock({ Array($0.values) }) { subscriber.yield() }
        return changes
    }

    /// Merges changes that came from other devices (sync, replay). Idempotent: changes already
    /// seen change nothing. One transaction for the whole batch.
    package func applyRemote(_ changes: [Change]) throws {
        try applyRemote(changes) { _ in }
    }

    /// ``applyRemote(_:)`` and, in the same transaction and before merging (a clock correction
    /// applies to the merge), `update` to the sync client's bookkeeping: a pull page's changes and
    /// the cursor after them are stored together or not at all.
    @discardableResult
    package func applyRemote<Result: Sendable>(
        _ changes: [Change], updatingSyncProgress update: (inout SyncProgress) throws -> Result
    ) throws -> Result {
        try core.withLock { core in
            var anyChanged = false
            let clockBefore = core.hlc
            var adopted = false
            let result: Result
            do {
                result = try database.writer.write { db in
                    adopted = try adoptWritesFromElsewhere(&core, db)
                    let old = try ReplicaDatabase.syncProgress(db)
                    var progress = old
                    let result = try update(&progress)
                    try ReplicaDatabase.save(progress, over: old, db)
                    clockOffsetMilliseconds.store(progress.clockOffset, ordering: .relaxed)
                    if core.firstSync != progress.firstSyncHold {
                        core.firstSync = progress.firstSyncHold
                        anyChanged = true
                    }
                    // This device's own changes come back in pulls; those it does not hold (made
                    // before a reinstall, see `continueDeviceLog(after:)`) are its log again.
                    let holdsOwn = changes.contains { $0.device == deviceID }
                    let adoptedThrough =
                        holdsOwn ? try ReplicaDatabase.meta(.ownLogAdoptedThrough, db).flatMap { Int64($0) } ?? 0 : 0
                    var merging = holdsOwn ? [] : changes
                    for change in changes where holdsOwn {
                        if change.device == deviceID {
                            guard change.seq <= adoptedThrough else { continue }
                            try db.execute(
                                sql: "INSERT OR IGNORE INTO change (seq, hlc, kind, body) VALUES (?, ?, ?, ?)",
                                arguments: [
                                    change.seq, change.hlc.rawValue, change.kind.rawValue, change.canonicalJSON,
                                ])
                            guard db.changesCount > 0 else { continue }
                        }
                        merging.append(change)
                    }
                    let now = UInt64(max(0, nowMilliseconds))
                    for change in merging { core.hlc.observe(change.hlc, physicalMilliseconds: now) }
                    let changed = merge.applyAll(&core.state, merging, core.donationLimits)
                    anyChanged = changed.contains(true)
                    guard anyChanged || core.hlc != clockBefore else { return result }
                    // Remember the latest *remote* stamp (not our own clock, which a skewed device
                    // may have pushed far ahead): re-stamping after `clock_skew` restarts from it.
                    let remoteLatest = changes.lazy.filter { $0.device != self.deviceID }.map(\.hlc).max()
                    try ReplicaDatabase.persist(
                        merging, merged: changed, local: false, state: core.state, limits: core.donationLimits,
                        observed: remoteLatest, eachMerged: true, db)
                    return result
                }
            } catch {
                reloadAfterFailure(&core)
                throw error
            }
            if anyChanged || adopted { notifyObservers(&core) }
            return result
        }
    }

    /// Closes the replica's database now, its write-ahead log checkpointed into the database file,
    /// for a process about to end (a command-line tool that leaves the replica's memory to the
    /// process's exit rather than freeing it object by object). Nothing may use the replica after:
    /// reads and writes then fail.
    public func close() throws {
        // The pool closes its writer before its read-only readers, and a read-only connection
        // cannot checkpoint: without this the log would stay beside the database file.
        _ = try database.writer.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        try database.writer.close()
    }

    /// This device's changes with sequence numbers above `seq`, in order (the outbox and history).
    package func localChanges(after seq: Int64 = 0, limit: Int = .max) throws -> [Change] {
        try database.localChanges(after: seq, limit: limit)
    }

    /// The sequence number of this device's latest local change (0 before any).
    package var lastLocalSeq: Int64 {
        get throws {
            try reloadIfChangedElsewhere()
            return core.withLock { $0.nextSeq - 1 }
        }
    }

    /// A copy of everything the replica knows.
    public var state: ReplicaState { core.withLock { $0.state } }

    /// The latest HLC this replica issued or observed.
    package var latestHLC: HLC { core.withLock { $0.hlc.last } }
}
