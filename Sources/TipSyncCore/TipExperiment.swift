/// A randomized holdout on one tip (protocol.md §13.12): a share of accounts never sees the tip, and
/// every device of every account records when the tip reached it ("would have been shown now") and,
/// outside the holdout, when it was first shown — so the server can compare how often each arm
/// reaches the experiment's goal.
///
/// Assignment is per account, sticky and the same in every client: the account's rollout bucket
/// (``RolloutBucket``, protocol.md §13.8) for the key `experiment:<id>` — below `holdout × 100` is the
/// holdout. It depends on the account name, the experiment's `id` and `holdout` only, which the
/// server refuses to change while the experiment runs.
public struct TipExperiment: Sendable, Hashable, Codable {
    /// Names the experiment: its bucket key and the events its records donate to. 1 to 64 ASCII
    /// letters, digits, `-`, `_` and `.`.
    public var id: String
    /// Percent of accounts held out: above 0, below 100, a multiple of 0.01.
    public var holdout: Double
    /// What counts as converting.
    public var goal: Goal
    /// Seconds after an account's first reach within which its goal counts: 3600 to 7,776,000
    /// (90 days); absent: 604,800 (7 days).
    public var window: Double?
    /// When the experiment was stopped (milliseconds since 1970); absent: it runs. A stopped
    /// experiment holds nobody out and records nothing; its results count what happened before.
    public var stoppedAt: Int64?

    /// What an experiment measures: a donation to an event, or the tip's `actionPerformed`
    /// invalidation (which an app writes when the person uses the feature, tip shown or not).
    public enum Goal: Sendable, Hashable {
        case event(String)
        case actionPerformed
    }

    /// Content variants the accounts outside the holdout are split among evenly: 1 to
    /// ``maximumVariants`` when present (an empty list is refused); absent: one arm, `treatment`,
    /// shown the tip as written.
    public var variants: [Variant]?

    /// An arm, by its protocol name: `holdout`, `treatment`, or a variant's id.
    public struct Arm: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init?(rawValue: String) {
            guard !rawValue.isEmpty else { return nil }
            self.rawValue = rawValue
        }
        init(_ name: String) { rawValue = name }
        public static let holdout = Arm("holdout")
        /// The one arm outside the holdout when the experiment has no variants.
        public static let treatment = Arm("treatment")
        public var description: String { rawValue }
    }

    /// One variant of the tip's content: what it gives replaces the tip's; its `localizations`
    /// (protocol.md §13.10) replace the tip's, and a variant that gives text but no localizations
    /// shows that text in every locale.
    public struct Variant: Sendable, Hashable, Codable {
        public var id: String
        public var title: String?
        public var message: String?
        public var image: String?
        public var localizations: [String: TipLocalization]?

        public init(
            id: String, title: String? = nil, message: String? = nil, image: String? = nil,
            localizations: [String: TipLocalization]? = nil
        ) {
            self.id = id
            self.title = title
            self.message = message
            self.image = image
            self.localizations = localizations
        }
    }

    /// Every arm, the holdout first, then each variant in order (or `treatment`).
    public var arms: [Arm] {
        [.holdout] + ((variants ?? []).isEmpty ? [.treatment] : variants!.map { Arm($0.id) })
    }

    /// At most this many variants.
    public static let maximumVariants = 8

    /// The window when none is given: 7 days.
    public static let defaultWindow: Double = 604_800
    /// The bounds of `window`, in seconds: an hour to 90 days.
    public static let windowBounds: ClosedRange<Double> = 3600...7_776_000

    public init(
        id: String, holdout: Double, goal: Goal, window: Double? = nil, stoppedAt: Int64? = nil,
        variants: [Variant]? = nil
    ) {
        self.variants = variants
        self.id = id
        self.holdout = holdout
        self.goal = goal
        self.window = window
        self.stoppedAt = stoppedAt
    }

    /// Whether it still runs (not stopped).
    public var isRunning: Bool { stoppedAt == nil }

    /// The window in seconds, the default filled in.
    public var windowSeconds: Double { window ?? Self.defaultWindow }

    /// Buckets below this are held out: `holdout × 100`, rounded.
    public var holdoutBuckets: Int { Int((holdout * 100).rounded()) }

    /// The rollout-bucket key the assignment reads: `experiment:<id>`, so it draws independently of
    /// a rollout keyed on the tip's id.
    public var bucketKey: String { "experiment:\(id)" }

    /// The account's arm: the same on every device and in every client. Below the holdout's
    /// threshold `h`, the holdout; else, with `n` variants, variant `floor((bucket − h) × n / (10000 − h))`.
    public func arm(account: String) -> Arm {
        let bucket = RolloutBucket.bucket(account: account, key: bucketKey)
        let threshold = holdoutBuckets
        if bucket < threshold { return .holdout }
        guard let variants, !variants.isEmpty else { return .treatment }
        return Arm(variants[(bucket - threshold) * variants.count / (RolloutBucket.count - threshold)].id)
    }

    /// The variant shown to `arm`, if it is one.
    public func variant(_ arm: Arm) -> Variant? {
        variants?.first { $0.id == arm.rawValue }
    }

    /// The event a device donates to when the tip first reaches it: `tipsync.reach:<id>`.
    public var reachEvent: String { "tipsync.reach:\(id)" }
    /// The event a device donates to when it first shows the tip: `tipsync.exposure:<id>`.
    public var exposureEvent: String { "tipsync.exposure:\(id)" }

    /// Why `id` cannot name an experiment, or `nil`.
    public static func idProblem(_ id: String) -> String? {
        let allowed = id.utf8.allSatisfy {
            ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d
                || $0 == 0x5f || $0 == 0x2e
        }
        return !id.isEmpty && id.utf8.count <= 64 && allowed
            ? nil : "an experiment id is 1 to 64 ASCII letters, digits, '-', '_' and '.'; got '\(id)'"
    }

    /// Checks the experiment's members; `path` names it (`tips[2].experiment`).
    func validate(at path: String, eventIDs: Set<String>) throws(Catalog.ValidationError) {
        if let problem = Self.idProblem(id) { throw Catalog.ValidationError(description: "\(path).id: \(problem)") }
        let buckets = holdout * 100
        guard holdout.isFinite, holdout > 0, holdout < 100, abs(buckets - buckets.rounded()) < 1e-6 else {
            throw Catalog.ValidationError(
                description:
                    "\(path).holdout: the percent of accounts held out, above 0 and below 100 in steps of 0.01; got \(holdout)"
            )
        }
        if let window, !(window.isFinite && Self.windowBounds.contains(window)) {
            throw Catalog.ValidationError(
                description: "\(path).window: seconds from 3600 (an hour) to 7776000 (90 days); got \(window)")
        }
        if let stoppedAt, stoppedAt < 0 || stoppedAt > JSONNumberLimits.maxInteger {
            throw Catalog.ValidationError(
                description: "\(path).stoppedAt: milliseconds since 1970 from 0 to \(JSONNumberLimits.maxInteger)")
        }
        if let variants {
            guard !variants.isEmpty else {
                throw Catalog.ValidationError(
                    description:
                        "\(path).variants: 1 to \(Self.maximumVariants) variants; got none (leave it out for one arm)")
            }
            guard variants.count <= Self.maximumVariants else {
                throw Catalog.ValidationError(
                    description: "\(path).variants: at most \(Self.maximumVariants) variants; got \(variants.count)")
            }
            var seen: Set<String> = []
            for (index, variant) in variants.enumerated() {
                let field = "\(path).variants[\(index)].id"
                if let problem = Self.idProblem(variant.id) {
                    throw Catalog.ValidationError(description: "\(field): \(problem)")
                }
                guard variant.id != Arm.holdout.rawValue, variant.id != Arm.treatment.rawValue else {
                    throw Catalog.ValidationError(
                        description: "\(field): 'holdout' and 'treatment' name arms of their own; pick another id")
                }
                guard seen.insert(variant.id).inserted else {
                    throw Catalog.ValidationError(description: "\(field): '\(variant.id)' is listed twice")
                }
                for (tag, _) in variant.localizations ?? [:] where DeviceContext.canonicalLocale(tag) != tag {
                    throw Catalog.ValidationError(
                        description:
                            "\(path).variants[\(index)].localizations.\(tag): a localization is keyed by a BCP 47 language tag in canonical case (write '\(DeviceContext.canonicalLocale(tag))')"
                    )
                }
            }
        }
        if case .event(let event) = goal, !eventIDs.contains(event) {
            throw Catalog.ValidationError(
                description: "\(path).goal.event: names event '\(event)', which the catalog's events do not declare")
        }
    }

    private enum CodingKeys: String, CodingKey { case id, holdout, goal, window, stoppedAt, variants }
    private enum GoalKeys: String, CodingKey { case event, actionPerformed }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        holdout = try container.decode(Double.self, forKey: .holdout)
        window = try container.decodeIfPresent(Double.self, forKey: .window)
        stoppedAt = try container.decodeIfPresent(Int64.self, forKey: .stoppedAt)
        variants = try container.decodeIfPresent([Variant].self, forKey: .variants)
        let goalContainer = try container.nestedContainer(keyedBy: GoalKeys.self, forKey: .goal)
        let event = try goalContainer.decodeIfPresent(String.self, forKey: .event)
        let action = try goalContainer.decodeIfPresent(Bool.self, forKey: .actionPerformed)
        switch (event, action) {
        case (let event?, nil): goal = .event(event)
        case (nil, true?): goal = .actionPerformed
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .goal, in: container,
                debugDescription: #"a goal is {"event": ID} or {"actionPerformed": true}"#)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(holdout, forKey: .holdout)
        var goalContainer = container.nestedContainer(keyedBy: GoalKeys.self, forKey: .goal)
        switch goal {
        case .event(let event): try goalContainer.encode(event, forKey: .event)
        case .actionPerformed: try goalContainer.encode(true, forKey: .actionPerformed)
        }
        try container.encodeIfPresent(window, forKey: .window)
        try container.encodeIfPresent(stoppedAt, forKey: .stoppedAt)
        try container.encodeIfPresent(variants, forKey: .variants)
    }
}

extension TipExperiment.Goal {
    /// The goal as protocol JSON: `{"event": ID}` or `{"actionPerformed": true}`.
    public var json: JSONValue {
        switch self {
        case .event(let event): .object(["event": .string(event)])
        case .actionPerformed: .object(["actionPerformed": .bool(true)])
        }
    }
}
