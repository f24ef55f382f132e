/// Makes a failing history small: removes chunks of steps (halving their size, then one step at a
/// time) as long as the history still fails, then drops devices no step names.
public struct Shrinker: Sendable {
    public let replayer: Replayer
    /// Replays tried at most (a bound on shrinking time).
    public var budget: Int

    public init(replayer: Replayer, budget: Int = 400) {
        self.replayer = replayer
        self.budget = budget
    }

    public func shrink(_ history: History) async throws -> History {
        var current = history
        var tries = 0
        var chunk = max(1, current.steps.count / 2)
        while chunk >= 1 && tries < budget {
            var start = 0
            var removedAny = false
            while start < current.steps.count && tries < budget {
                var candidate = current
                candidate.steps.removeSubrange(start..<min(start + chunk, candidate.steps.count))
                tries += 1
                if try await !replayer.replay(candidate).passed {
                    current = candidate
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny || chunk > 1 { chunk /= 2 }
        }
        let named = Set(current.steps.compactMap(\.device))
        var trimmed = current
        trimmed.devices = current.devices.filter { named.contains($0.id) }
        if trimmed.devices.count < current.devices.count, !trimmed.devices.isEmpty,
            try await !replayer.replay(trimmed).passed
        {
            current = trimmed
        }
        return current
    }
}
