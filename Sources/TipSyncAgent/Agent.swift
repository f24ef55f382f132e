public import Foundation
import Synchronization
public import TipSync
public import TipSyncCore

/// One device's agent: its replica, configuration and catalog, and the operations the CLI and the
/// local API share. Opening one is cheap; several (the daemon and CLI calls) may share a store.
public final class Agent: Sendable {
    public let store: AgentStore
    public let configuration: AgentConfiguration
    public let replica: TipsReplica
    /// The catalog file's modification date when it was last loaded (to notice `catalog load`).
    let catalogModified: Mutex<Date?>

    /// Opens an initialized store.
    /// - Parameters:
    ///   - clockOffset: seconds added to the system clock (`--clock-offset`), to simulate a skewed device.
    ///   - clock: the clock to use instead of the system's (tests).
    public init(
        store: AgentStore, clockOffset: TimeInterval = 0, clock: TipsClock = .system,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        self.store = store
        configuration = try store.readConfiguration()
        do {
            replica = try TipsReplica(
                directory: store.replicaDirectory, deviceID: configuration.device,
                clock: clockOffset == 0 ? clock : clock.offset(by: clockOffset), environment: environment)
        } catch {
            throw AgentError(
                .badStore,
                message: "cannot open the replica in \(store.replicaDirectory.path): \(FileProblem.words(error))")
        }
        replica.deviceContext = configuration.deviceContext(account: replica.deviceContext.account)
        let (catalog, modified) = try store.readCatalog()
        try replica.load(catalog: catalog)
        catalogModified = Mutex(modified)
    }

    /// Closes the replica's database (``TipsReplica/close()``), for a process about to end; the
    /// agent must not be used after.
    public func close() throws {
        try replica.close()
    }

    // MARK: Catalog

    /// Validates a catalog file, stores it in the agent store and loads it. An invalid file changes nothing.
    public func loadCatalog(from file: URL) throws -> Catalog {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw AgentError(.noFile, message: "cannot read \(file.path): \(FileProblem.whyUnreadable(file.path))")
        }
        let catalog = try AgentStore.decodeCatalog(data, name: file.path)
        try store.writeCatalog(data)
        try replica.load(catalog: catalog, replacing: true)
        catalogModified.withLock { $0 = try? store.readCatalog().modified }
        return catalog
    }

    /// Reloads the stored catalog if another process replaced it. Returns whether it did.
    @discardableResult
    public func reloadCatalogIfChanged() throws -> Bool {
        let attributes = try? FileManager.default.attributesOfItem(atPath: store.catalogFile.path)
        let modified = attributes?[.modificationDate] as? Date
        guard modified != catalogModified.withLock({ $0 }) else { return false }
        let (catalog, stamp) = try store.readCatalog()
        try replica.load(catalog: catalog, replacing: true)
        catalogModified.withLock { $0 = stamp }
        return true
    }

    var tipIDs: [String] { replica.catalogTips.map(\.id) }

    func tip(_ id: String) throws -> TipDefinition {
        if let tip = replica.catalogTip(id) { return tip }
        if let platforms = replica.platforms(ofTipForOthers: id) {
            throw AgentError.notForThisPlatform(id, platforms: platforms, device: replica.deviceContext.platform)
        }
        throw AgentError.unknownTip(id, known: tipIDs)
    }

    // MARK: Reading

    /// Every catalog tip's report (or one tip's): the status an app shows each tip by, so asking
    /// records the reach of a tip's running experiment when it would be shown now (protocol.md
    /// §13.12, ``TipsReplica/displayStatus(of:)``).
    public func status(tip id: String? = nil) throws -> StatusReport {
        let tips = try id.map { [try tip($0)] } ?? replica.catalogTips
        var statuses: [TipStatus] = []
        try write { statuses = try tips.map { try replica.recordingReach(of: $0) } }
        return StatusReport(tips: zip(tips, statuses).map { Self.report(of: $0, status: $1, in: replica) })
    }

    /// `tip`'s report with `status`: its content as this device shows it, and for a pending tip the
    /// step that holds it (protocol.md §13.9).
    static func report(of tip: TipDefinition, status: TipStatus, in replica: TipsReplica) -> TipReport {
        let content = replica.content(of: tip)
        let pendingReason = status == .pending ? replica.explanation(of: tip).reason.code : nil
        return TipReport(
            id: tip.id, status: status, displayCount: replica.displayTotals(ofTip: tip.id).count,
            heldForFirstSync: replica.isHeldForFirstSync(tip), pendingReason: pendingReason, title: content.title,
            message: content.message, image: content.image, actions: content.actions)
    }

    /// A parameter's current value (its default until written).
    /// Why each tip (or one) has its status now (protocol.md §13.9), in catalog order.
    public func explanations(tip id: String? = nil) throws -> [TipExplanation] {
        try (id.map { [try tip($0)] } ?? replica.catalogTips).map { replica.explanation(of: $0) }
    }

    public func parameter(_ name: String) throws -> JSONValue {
        _ = try parameterDefinition(name)
        return replica.parameterValue(name)
    }

    func parameterDefinition(_ name: String) throws -> ParameterDefinition {
        let known = Dictionary(replica.parameterDefinitions.map { ($0.id, $0) }) { first, _ in first }
        guard let definition = known[name] else {
            throw AgentError.unknownParameter(name, known: known.keys.sorted())
        }
        return definition
    }

    // MARK: Writing

    /// Donates to an event; `value` is the donation's info (any JSON), matched by `field` rules.
    public func donate(event: String, value: JSONValue? = nil) throws {
        guard !event.isEmpty else { throw AgentError.badRequest("an event id must not be empty") }
        // A misspelled event would sync to every device and count for nothing: only declared ones.
        let known = replica.catalogEvents
        guard known.contains(event) else { throw AgentError.unknownEvent(event, known: known) }
        try write { try replica.donate(event: event, info: value) }
    }

    /// Sets a parameter. The value must have the default's JSON type (`null` is always allowed).
    /// - Parameter inMemory: whether this process keeps running (the daemon): only then can a
    ///   transient parameter, which is never stored, be set meaningfully.
    public func setParameter(_ name: String, to value: JSONValue, inMemory: Bool = false) throws {
        let definition = try parameterDefinition(name)
        if definition.isTransient && !inMemory {
            throw AgentError(
                .transientParameter,
                message:
                    "parameter '\(name)' is transient (kept in memory, never stored); set it through a running agent's local API"
            )
        }
        if let expected = Self.kind(of: definition.defaultValue), let actual = Self.kind(of: value), expected != actual
        {
            throw AgentError(
                .wrongType,
                message: "parameter '\(name)' holds \(expected) values; got \(actual) \(value.canonicalText)")
        }
        try write { try replica.setParameter(name, to: value) }
    }

    static func kind(of value: JSONValue) -> String? {
        switch value {
        case .null: nil
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Records that the tip was shown (counts toward `MaxDisplayCount` on every device).
    public func display(tip id: String, duration: TimeInterval = 0) throws {
        _ = try tip(id)
        guard duration >= 0, duration.isFinite else { throw AgentError.badRequest("the duration must be ≥ 0 seconds") }
        try write { try replica.recordDisplay(tip: id, duration: duration) }
    }

    /// Invalidates the tip everywhere (`tipClosed`: the person dismissed it).
    public func invalidate(tip id: String, reason: InvalidationReason = .tipClosed) throws {
        _ = try tip(id)
        try write { try replica.invalidate(tip: id, reason: reason) }
    }

    /// Makes the tip eligible again and restarts its display counts.
    public func resetEligibility(tip id: String) throws {
        _ = try tip(id)
        try write { try replica.resetEligibility(tip: id) }
    }

    func write(_ body: () throws -> Void) throws {
        do { try body() } catch { throw AgentError.wrap(error, "cannot write to the store") }
    }

    // MARK: Sync and history

    /// A sync client for this device, per the store's configuration.
    /// - Parameters:
    ///   - onServerCatalog: told of each server catalog applied or refused (the daemon logs it).
    ///   - onStatusChange: told of each change of the sync status (the daemon logs outages and recoveries).
    public func syncClient(
        onServerCatalog: (@Sendable (ServerCatalogEvent) -> Void)? = nil,
        onStatusChange: (@Sendable (SyncStatus, SyncStatus) -> Void)? = nil
    ) -> SyncClient {
        // The credential is asked for at the start and again after every refusal (protocol.md
        // §17.3): the token command runs again, or the store's token is read again — so a token
        // reissued with `init` while the daemon runs is used without a restart.
        let store = store
        let initial = configuration
        var sync = SyncConfiguration(server: configuration.server) {
            let current = (try? store.readConfiguration()) ?? initial
            if let command = current.tokenCommand { return try await TokenCommand.run(command) }
            return current.token
        }
        sync.firstSyncTimeout = configuration.effectiveFirstSyncTimeout
        if configuration.followsServerCatalog {
            sync.followsServerCatalog = true
            sync.onServerCatalog = { [self] event in
                // The applied catalog becomes the store's: `status` in other processes and the next
                // start (offline too) use it.
                if case .applied(_, _, let text) = event {
                    try? store.writeCatalog(text)
                    catalogModified.withLock { $0 = try? store.readCatalog().modified }
                }
                onServerCatalog?(event)
            }
        }
        sync.onStatusChange = onStatusChange
        return SyncClient(replica: replica, configuration: sync)
    }

    /// One push + pull round; a clear error when the server cannot be reached (changes stay queued).
    public func syncOnce() async throws {
        do {
            try await syncClient().syncOnce()
        } catch let error as SyncClientError {
            let queued = (try? replica.outbox(limit: 100_000).count) ?? 0
            switch error {
            case .unreachable:
                throw AgentError(
                    .unreachable,
                    message:
                        "cannot reach the server at \(configuration.server.absoluteString) (\(error)); \(queued) change(s) stay queued"
                )
            default:
                throw AgentError(.syncFailed, message: "sync failed: \(error)")
            }
        }
    }

    /// This device's change log as a history export (`export-history`; see HISTORY.md).
    public func exportHistory() throws -> String {
        let changes = try replica.localChanges()
        let lines = changes.map { "    " + $0.canonicalJSON }.joined(separator: ",\n")
        return """
            {
              "format": "tipsync-export",
              "version": 1,
              "device": \(JSONValue.string(replica.deviceID).canonicalText),
              "changes": [
            \(lines)
              ]
            }

            """
    }

    // MARK: Watching

    /// The current report of each tip (or one), then a report whenever a tip's status changes.
    public func watch(tip id: String? = nil) throws -> AsyncStream<TipReport> {
        let tips = try id.map { [try tip($0)] } ?? replica.catalogTips
        let (stream, continuation) = AsyncStream<TipReport>.makeStream()
        let replica = self.replica
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                for tip in tips {
                    group.addTask {
                        // What an app that shows tips follows: records reach as `status` does.
                        for await status in replica.catalogDisplayStatusUpdates(ofTip: tip.id, lastKnown: tip) {
                            continuation.yield(Self.report(of: tip, status: status, in: replica))
                        }
                    }
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
