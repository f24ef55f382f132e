public import Foundation
import Synchronization
import TipSyncCore

/// The mutations a replica offers; each becomes one change-log entry.
extension TipsReplica {
    /// Invalidates a tip on every device: permanent until `resetEligibility` or `resetDatastore`.
    public func invalidate(tip: String, reason: InvalidationReason) throws {
        try core.withLock { core in
            _ = try commitLocal(&core, [.eligibility(tip: tip, state: .invalidated(reason))])
        }
    }

    /// Makes an invalidated tip eligible again and starts a new display-count epoch.
    public func resetEligibility(tip: String) throws {
        try core.withLock { core in
            _ = try commitLocal(&core, [.eligibility(tip: tip, state: .eligible)])
        }
    }

    /// Records that a tip was on screen (once), for `duration` seconds. Counts toward
    /// `MaxDisplayCount` and `MaxDisplayDuration` on every device, and toward display frequency. In
    /// the treatment of the tip's running experiment it also records the account's first exposure
    /// (protocol.md §13.12).
    public func recordDisplay(tip: String, duration: TimeInterval = 0) throws {
        let now = nowMilliseconds
        try core.withLock { core in
            // Built from the counter as it is once other processes' displays are adopted.
            _ = try commitLocal(&core) { current in
                let (epoch, counter) = current.state.counter(of: tip, device: deviceID)
                return [
                    .display(
                        tip: tip, epoch: epoch, count: min((counter?.count ?? 0), JSONNumberLimits.maxInteger - 1) + 1,
                        duration: min(
                            (counter?.duration ?? 0) + (duration.isFinite ? max(0, duration) : 0),
                            Double(JSONNumberLimits.maxInteger)),
                        lastDisplayed: max(counter?.lastDisplayed ?? 0, now))
                ] + experimentOperationsForDisplay(of: tip, current, firstSeq: current.nextSeq + 1, date: now)
            }
        }
    }

    /// Donates to an event now, with an optional JSON payload.
    public func donate(event: String, info: JSONValue? = nil) throws {
        try donate(event: event, infos: [info])
    }

    /// Donates several times in one transaction (a burst).
    public func donate(event: String, infos: [JSONValue?]) throws {
        try core.withLock { core in
            let date = nowMilliseconds
            // Ids derive from sequence numbers, known only once other processes' writes are adopted.
            _ = try commitLocal(&core) { current in
                infos.enumerated().map { offset, info in
                    Change.Operation.donation(
                        event: event, id: "\(deviceID):\(current.nextSeq + Int64(offset))", date: date, info: info)
                }
            }
        }
    }

    /// Deletes every donation of an event (on every device).
    public func deleteDonations(event: String) throws {
        try core.withLock { core in
            _ = try commitLocal(&core, [.donationsDeleted(event: event)])
        }
    }

    /// Sets a parameter. Persistent parameters are stored and synced; transient ones live in memory.
    public func setParameter(_ id: String, to value: JSONValue) throws {
        try core.withLock { core in
            if core.parameters[id]?.isTransient == true {
                core.transientValues[id] = value.canonicalNumbers
                notifyObservers(&core)
            } else {
                _ = try commitLocal(&core, [.parameter(id: id, value: value)])
            }
        }
    }

    /// A parameter's value: transient value, synced value, or its registered default (`.null` if unknown).
    public func parameterValue(_ id: String) -> JSONValue {
        core.withLock { core in evaluator(core).parameterValue(id) }
    }

    /// Removes every tip, event and parameter record here and, through sync, on every device.
    public func resetDatastore() throws {
        try core.withLock { core in
            core.transientValues = [:]
            _ = try commitLocal(&core, [.datastoreReset])
        }
    }
}
