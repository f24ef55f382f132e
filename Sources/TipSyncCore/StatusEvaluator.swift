/// Computes tip status from a replica's state at an instant: TipKit's semantics as a pure function.
///
/// Order of precedence (protocol.md §4, "Status"): testing overrides; invalidation (explicit, then
/// display count/duration, summed over devices in the current display epoch); the catalog's off
/// switch; targeting; rules (all must hold); display frequency (only for tips that never appeared
/// and do not ignore it); the first-sync hold; an experiment's holdout. ``reason(of:)`` is that order, written once:
/// ``status(of:)`` and ``explanation(of:)`` both read it.
public struct StatusEvaluator: RuleContext {
    /// By default a rule sees an event's most recent 1000 donations.
    public static let defaultQueryLimit = 1000

    public var state: ReplicaState
    public var parameterDefaults: [String: JSONValue]
    public var transientValues: [String: JSONValue]
    public var donationLimits: [String: DonationLimit]
    public var displayFrequency: DisplayFrequency
    public var overrides: TestingOverrides
    /// Seconds since 1970.
    public var now: Double
    /// Remembered filter results (see ``RuleCache``); `nil` evaluates everything afresh.
    public var ruleCache: RuleCache?
    /// The device has not completed its first sync and is still within its bounded wait
    /// (``FirstSyncHold``): a tip that would be available is pending.
    public var heldForFirstSync = false
    /// What targeting reads about the device and its account.
    public var deviceContext = DeviceContext()
    /// `false`: the catalog turns every tip off (its `enabled: false`).
    public var tipsEnabled = true

    public init(
        state: ReplicaState, parameterDefaults: [String: JSONValue] = [:], transientValues: [String: JSONValue] = [:],
        donationLimits: [String: DonationLimit] = [:], displayFrequency: DisplayFrequency = .immediate,
        overrides: TestingOverrides = TestingOverrides(), now: Double, ruleCache: RuleCache? = nil
    ) {
        self.ruleCache = ruleCache
        self.state = state
        self.parameterDefaults = parameterDefaults
        self.transientValues = transientValues
        self.donationLimits = donationLimits
        self.displayFrequency = displayFrequency
        self.overrides = overrides
        self.now = now
    }

    public func parameterValue(_ id: String) -> JSONValue {
        transientValues[id] ?? state.parameterValue(id) ?? parameterDefaults[id] ?? .null
    }

    public func donationsVersion(_ event: String) -> UInt64? {
        state.events[event]?.version
    }

    public func donations(_ event: String) -> ArraySlice<Donation> {
        guard let all = state.events[event]?.donations else { return [] }
        let limit = donationLimits[event]
        var visible = all[...]
        if let maximumAge = limit?.maximumAge {
            let threshold = Int64(saturating: ((now - maximumAge) * 1000).rounded(.up))
            visible = visible.drop { $0.date < threshold }  // sorted by date
        }
        return visible.suffix(min(Self.defaultQueryLimit, limit?.maximumCount ?? .max))
    }

    /// Whether every rule holds.
    public func rulesHold(_ rules: [RuleExpression]) -> Bool {
        firstFailing(rules) == nil
    }

    /// The index of the first rule that does not hold, if any: a rule that fails to evaluate does
    /// not hold (protocol.md §13.5).
    func firstFailing(_ rules: [RuleExpression]) -> Int? {
        let evaluator = RuleEvaluator(context: self)
        return rules.firstIndex { (try? evaluator.holds($0)) != true }
    }

    /// The tip's status now.
    public func status(of tip: TipDefinition) -> TipStatus {
        reason(of: tip).status
    }

    /// Which step of "Status" decides the tip's status now, and with what: the one place the order
    /// of the steps is written.
    public func reason(of tip: TipDefinition) -> StatusReason {
        if let forced = overrides.status(for: tip.id) { return .testingOverride(forced) }
        if case .invalidated(let reason) = state.eligibility(of: tip.id) { return .invalidated(reason) }
        let totals = state.displayTotals(of: tip.id)
        if let maximum = tip.options.maxDisplayCount, totals.count >= maximum {
            return .maxDisplayCount(count: totals.count, maximum: maximum)
        }
        if let maximum = tip.options.maxDisplayDuration, totals.duration >= maximum {
            return .maxDisplayDuration(duration: totals.duration, maximum: maximum)
        }
        if !tipsEnabled { return .turnedOff(allTips: true) }
        if !tip.isEnabled { return .turnedOff(allTips: false) }
        if let index = firstFailing(tip.targeting ?? []) { return .targeting(index: index) }
        if let index = firstFailing(tip.rules) { return .rule(index: index) }
        if let until = throttledUntil(tip) { return .displayFrequency(until: until) }
        if heldForFirstSync { return .firstSync }
        if let experiment = tip.runningExperiment {
            guard let account = deviceContext.account else { return .experiment(id: experiment.id, arm: nil) }
            if experiment.arm(account: account) == .holdout { return .experiment(id: experiment.id, arm: .holdout) }
        }
        return .available
    }

    /// Display frequency: a tip that never appeared waits until `interval` has passed since the
    /// latest display of any tip on any device.
    public func isThrottled(_ tip: TipDefinition) -> Bool {
        throttledUntil(tip) != nil
    }

    /// When display frequency stops holding the tip back (milliseconds), or `nil` if it does not.
    func throttledUntil(_ tip: TipDefinition) -> Double? {
        guard !tip.options.ignoresDisplayFrequency, displayFrequency.interval > 0,
            !state.hasDisplayed(tip.id), let last = state.lastDisplayAnywhere
        else { return nil }
        let until = Double(last) + displayFrequency.interval * 1000
        return now * 1000 < until ? until : nil
    }

    /// The group's current tip: `.ordered` — the first tip not invalidated, if it is available;
    /// `.firstAvailable` — the first available tip.
    public func currentTip(of tips: [TipDefinition], priority: TipGroupPriority) -> TipDefinition? {
        for tip in tips {
            switch status(of: tip) {
            case .available: return tip
            case .invalidated: continue
            case .pending: if priority == .ordered { return nil }
            }
        }
        return nil
    }
}

extension StatusEvaluator {
    /// An evaluator configured by a catalog: its parameter defaults, donation limits and display
    /// frequency (no transient values, no testing overrides) — how the server, a conformance runner
    /// or any other reader that is not a device computes an account's tips.
    public init(state: ReplicaState, catalog: Catalog, now: Double, ruleCache: RuleCache? = nil) {
        self.init(
            state: state,
            parameterDefaults: Dictionary(catalog.parameters.map { ($0.id, $0.defaultValue) }) { first, _ in first },
            donationLimits: catalog.donationLimits, displayFrequency: catalog.displayFrequency ?? .immediate,
            now: now, ruleCache: ruleCache)
        tipsEnabled = catalog.enabled ?? true
    }
}
