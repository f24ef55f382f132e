public import Foundation

/// Status and the actions a tip's UI takes, on the shared replica (or an explicit one).
extension Tip {
    /// `.pending`, `.available` or `.invalidated(reason)`; `.pending` before `Tips.configure`.
    public var status: Tips.Status {
        guard let replica = Tips.replica else { return .pending }
        return status(in: replica)
    }

    /// Whether the tip should show now (`status == .available`).
    public var shouldDisplay: Bool { status == .available }

    /// The current status, then every change — including changes merged from other devices.
    public var statusUpdates: AsyncStream<Tips.Status> {
        guard let replica = Tips.replica else { return AsyncStream { $0.yield(.pending) } }
        return statusUpdates(in: replica)
    }

    /// `shouldDisplay`, then every change to it.
    public var shouldDisplayUpdates: AsyncStream<Bool> {
        let statuses = statusUpdates
        return AsyncStream { continuation in
            let task = Task {
                var last: Bool?
                for await status in statuses where status == .available ? last != true : last != false {
                    last = status == .available
                    continuation.yield(status == .available)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Invalidates the tip everywhere: it will not show again until `resetEligibility()`.
    public func invalidate(reason: Tips.InvalidationReason) {
        Tips.perform { try invalidate(reason: reason, in: $0) }
    }

    /// Makes an invalidated tip eligible again (and resets its display count).
    public func resetEligibility() async {
        Tips.perform { try resetEligibility(in: $0) }
    }

    /// Records that the tip was on screen for `duration` seconds (what TipKit's views do).
    public func recordDisplay(duration: TimeInterval = 0) {
        Tips.perform { try recordDisplay(duration: duration, in: $0) }
    }

    // MARK: Explicit replica

    /// The status the app shows the tip by: records the tip's reach when it has a running
    /// experiment and would be shown now (``TipsReplica/displayStatus(of:)``).
    public func status(in replica: TipsReplica) -> Tips.Status {
        replica.displayStatus(of: register(in: replica))
    }

    /// The status, then every change; records reach as ``status(in:)`` whenever the tip comes to be
    /// one the app would show now (``TipsReplica/displayStatusUpdates(of:)``).
    public func statusUpdates(in replica: TipsReplica) -> AsyncStream<Tips.Status> {
        _ = register(in: replica)
        return replica.displayStatusUpdates { definition }
    }

    public func invalidate(reason: Tips.InvalidationReason, in replica: TipsReplica) throws {
        try replica.invalidate(tip: id, reason: reason)
    }

    public func resetEligibility(in replica: TipsReplica) throws {
        try replica.resetEligibility(tip: id)
    }

    public func recordDisplay(duration: TimeInterval = 0, in replica: TipsReplica) throws {
        try replica.recordDisplay(tip: id, duration: duration)
    }
}

extension Tips {
    /// Where errors from TipKit's non-throwing calls go (TipKit's API cannot throw; a failed disk
    /// write must not crash the app). Default: print to standard error.
    public static func report(_ error: any Error) {
        FileHandle.standardError.write(Data("TipSync: \(error)\n".utf8))
    }

    static func perform(_ body: (TipsReplica) throws -> Void) {
        guard let replica else {
            report(TipsError.notConfigured)
            return
        }
        do { try body(replica) } catch { report(error) }
    }
}
