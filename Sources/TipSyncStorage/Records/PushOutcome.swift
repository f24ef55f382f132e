import TipSyncServerBasics

/// What ``ChangeLogStore/push(_:from:)`` stored: the body of `POST /v1/push`'s answer.
package struct PushOutcome: Sendable, Hashable {
    package var accepted: Int
    package var duplicates: Int
    package var highestSeq: Int64
    /// Entries the account's log has gained since its last compaction (automatic compaction's trigger).
    package var entriesSinceCompaction: Int64
    /// The cursor generation, when the store read it in the push's own transaction (SQLite: saves a
    /// separate read per push); `nil` when the caller must ask ``SyncStore/cursorGeneration()``.
    package var generation: String?
    /// What the push appended to the account's log: its first position and the stored bodies, in
    /// order (positions `first`, `first + 1`, …). The server writes them to live streams that were at
    /// the end of the log without reading them back (``LivePages/prime(account:after:page:)``).
    /// `nil`: nothing appended, or a store that does not say.
    package var appended: AppendedEntries?

    package init(
        accepted: Int, duplicates: Int, highestSeq: Int64, entriesSinceCompaction: Int64 = 0, generation: String? = nil,
        appended: AppendedEntries? = nil
    ) {
        self.appended = appended
        self.accepted = accepted
        self.duplicates = duplicates
        self.highestSeq = highestSeq
        self.entriesSinceCompaction = entriesSinceCompaction
        self.generation = generation
    }
}

/// Log entries one push appended: consecutive positions from `first`, with their stored bodies.
package struct AppendedEntries: Sendable, Hashable {
    package var first: Int64
    package var bodies: [String]

    package init(first: Int64, bodies: [String]) {
        self.first = first
        self.bodies = bodies
    }

    /// The position of the last entry.
    package var last: Int64 { first + Int64(bodies.count) - 1 }
}
