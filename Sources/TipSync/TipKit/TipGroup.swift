import Synchronization

/// Tips shown one at a time (TipKit's `TipGroup`): `.ordered` shows a tip once every earlier tip is
/// invalidated; `.firstAvailable` shows the first eligible one. Groups respect display frequency.
public struct TipGroup: Sendable {
    public typealias Priority = TipGroupPriority

    public let priority: Priority
    public let tips: [any Tip]

    public init(_ priority: Priority = .ordered, @Tips.TipGroupBuilder _ tips: () -> [any Tip]) {
        self.priority = priority
        self.tips = tips()
    }

    /// The tip to show now, or `nil`.
    public var currentTip: (any Tip)? {
        guard let replica = Tips.replica else { return nil }
        return currentTip(in: replica)
    }

    public func currentTip(in replica: TipsReplica) -> (any Tip)? {
        let definitions = tips.map { $0.register(in: replica) }
        let (evaluator, effective) = replica.core.withLock { core in
            (
                replica.evaluator(core),
                definitions.map { TipsReplica.effective($0, core.catalogIsServers, core.catalog) }
            )
        }
        // Showing the group reaches the tip it shows — or would show, but for a holdout (protocol.md §13.12).
        if let reached = evaluator.tipReachedInGroup(of: effective, priority: priority) {
            _ = replica.displayStatus(of: reached)
        }
        guard let id = evaluator.currentTip(of: effective, priority: priority)?.id else { return nil }
        return tips.first { $0.id == id }
    }

    /// The current tip, then every change to it.
    public var currentTipUpdates: AsyncStream<(any Tip)?> {
        guard let replica = Tips.replica else { return AsyncStream { $0.yield(nil) } }
        return currentTipUpdates(in: replica)
    }

    public func currentTipUpdates(in replica: TipsReplica) -> AsyncStream<(any Tip)?> {
        let tips = tips
        let definitions = tips.map { $0.register(in: replica) }
        let ids = replica.currentTipUpdates(of: { definitions }, priority: priority)
        return AsyncStream { continuation in
            let task = Task {
                for await id in ids { continuation.yield(id.flatMap { id in tips.first { $0.id == id } }) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
