import Foundation
import Synchronization
import TipSyncCore

/// Reading tip status, once or as a stream of changes.
extension TipsReplica {
    /// What an observer watches: a tip's status or a group's current tip.
    enum Observed: Equatable, Sendable {
        case status(TipStatus)
        /// A status and the arm whose reach asking it now would record (``displayStatusUpdates(of:)``).
        case displayStatus(TipStatus, TipExperiment.Arm?)
        /// A group's current tip, and the tip whose reach showing the group now would record.
        case groupTips(current: String?, reached: TipDefinition?)
    }

    /// The catalog's tips at one moment, and whether they are the server's (then they override
    /// declared tips of the same id).
    struct Definitions: Sendable {
        var catalog: [String: TipDefinition]
        var isServers: Bool

        func effective(_ tip: TipDefinition) -> TipDefinition { TipsReplica.effective(tip, isServers, catalog) }
    }

    struct Observer {
        /// Given the evaluator and the definitions as they are now (a catalog replaced while the
        /// observer runs is what it evaluates next).
        var evaluate: @Sendable (StatusEvaluator, Definitions) -> Observed
        var yield: @Sendable (Observed) -> Void
        var last: Observed
    }

    /// The status of a tip definition now (a followed server catalog's tip of the same id wins).
    public func status(of tip: TipDefinition) -> TipStatus {
        core.withLock { core in evaluator(core).status(of: Self.effective(tip, core.catalogIsServers, core.catalog)) }
    }

    /// The definition a tip is evaluated with: the server catalog's tip of the same id when this
    /// replica follows the server's catalog, else the one given.
    static func effective(_ tip: TipDefinition, _ serverCatalog: Bool, _ catalog: [String: TipDefinition])
        -> TipDefinition
    {
        serverCatalog ? catalog[tip.id] ?? tip : tip
    }

    /// The definition `tip` is shown and evaluated with: a followed server catalog's tip of the same
    /// id (its rules, options and content), else `tip` itself.
    public func effectiveDefinition(of tip: TipDefinition) -> TipDefinition {
        core.withLock { core in Self.effective(tip, core.catalogIsServers, core.catalog) }
    }

    /// Whether this tip reads `.pending` only because tips are held for the first sync (it would be
    /// available otherwise): what "why is this tip not showing?" answers for it (protocol.md §17.1).
    public func isHeldForFirstSync(_ tip: TipDefinition) -> Bool {
        core.withLock { core in
            var evaluator = evaluator(core)
            guard evaluator.heldForFirstSync else { return false }
            evaluator.heldForFirstSync = false
            return evaluator.status(of: Self.effective(tip, core.catalogIsServers, core.catalog)) == .available
        }
    }

    /// The status of a catalog tip now; `nil` when the catalog has no such tip.
    public func status(ofTip id: String) -> TipStatus? {
        core.withLock { core in core.catalog[id].map { evaluator(core).status(of: $0) } }
    }

    /// The status of many tips at one instant, in the order given.
    public func statuses(of tips: [TipDefinition]) -> [TipStatus] {
        core.withLock { core in
            let evaluator = evaluator(core)
            return tips.map { evaluator.status(of: Self.effective($0, core.catalogIsServers, core.catalog)) }
        }
    }

    /// A tip's display totals on all devices in its current epoch.
    public func displayTotals(ofTip id: String) -> (count: Int64, duration: Double) {
        core.withLock { $0.state.displayTotals(of: id) }
    }

    /// The current status, then every change to it — from local writes, merged remote changes,
    /// overrides or definitions — until the stream is dropped.
    public func statusUpdates(of tip: @escaping @Sendable () -> TipDefinition) -> AsyncStream<TipStatus> {
        observe { evaluator, definitions in .status(evaluator.status(of: definitions.effective(tip()))) }
            .compactMap { if case .status(let status) = $0 { status } else { nil } }
            .eraseToStream()
    }

    /// A catalog tip's status, then every change to it, evaluated with the catalog's current
    /// definition: a catalog loaded or received from the server while it runs changes what it
    /// reports. A tip the catalog no longer has is evaluated with its last known definition.
    public func catalogStatusUpdates(ofTip id: String, lastKnown: TipDefinition) -> AsyncStream<TipStatus> {
        observe { evaluator, definitions in .status(evaluator.status(of: definitions.catalog[id] ?? lastKnown)) }
            .compactMap { if case .status(let status) = $0 { status } else { nil } }
            .eraseToStream()
    }

    /// The group's current tip id, then every change to it.
    public func currentTipUpdates(
        of tips: @escaping @Sendable () -> [TipDefinition], priority: TipGroupPriority
    ) -> AsyncStream<String?> {
        let updates = observe { evaluator, definitions in
            let group = tips().map(definitions.effective)
            return .groupTips(
                current: evaluator.currentTip(of: group, priority: priority)?.id,
                reached: evaluator.tipReachedInGroup(of: group, priority: priority))
        }
        // What the app shows the group by: records the reach of a tip the group shows, or would show
        // but for an experiment's holdout (protocol.md §13.12).
        return AsyncStream { continuation in
            let task = Task { [weak self] in
                var last: String??
                for await case .groupTips(let current, let reached) in updates {
                    if let reached, let self { _ = self.displayStatus(of: reached) }
                    if last != .some(current) { continuation.yield(current) }
                    last = .some(current)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Re-evaluates every observer now (time passing can change status: throttles end, windows slide).
    public func refresh() {
        core.withLock { core in notifyObservers(&core) }
    }

    func observe(_ evaluate: @escaping @Sendable (StatusEvaluator, Definitions) -> Observed)
        -> AsyncStream<Observed>
    {
        let (stream, continuation) = AsyncStream<Observed>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id: UInt64 = core.withLock { core in
            let id = core.nextObserverID
            core.nextObserverID += 1
            let initial = evaluate(
                evaluator(core), Definitions(catalog: core.catalog, isServers: core.catalogIsServers))
            continuation.yield(initial)
            core.observers[id] = Observer(
                evaluate: evaluate, yield: { continuation.yield($0) }, last: initial)
            if core.ticker == nil {
                core.ticker = Task { [weak self] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: Self.timeRefreshInterval)
                        guard let self, !Task.isCancelled else { return }
                        // Another process sharing the store may have written; reloading notifies.
                        if (try? self.reloadIfChangedElsewhere()) != true { self.refresh() }
                    }
                }
            }
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.core.withLock { core in
                _ = core.observers.removeValue(forKey: id)
                if core.observers.isEmpty {
                    core.ticker?.cancel()
                    core.ticker = nil
                }
            }
        }
        return stream
    }

    /// Called with the lock held after every change: emits to observers whose value changed.
    func notifyObservers(_ core: inout Core) {
        guard !core.observers.isEmpty else { return }
        let evaluator = evaluator(core)
        let definitions = Definitions(catalog: core.catalog, isServers: core.catalogIsServers)
        for (id, observer) in core.observers {
            let value = observer.evaluate(evaluator, definitions)
            if value != observer.last {
                core.observers[id]?.last = value
                observer.yield(value)
            }
        }
    }
}

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Wraps any sequence as an `AsyncStream` (what TipKit's update properties return).
    func eraseToStream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let task = Task {
            do {
                for try await element in self { continuation.yield(element) }
            } catch {}
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
