/// What ``ChangeLogStore/push(_:from:)`` stored: the body of `POST /v1/push`'s answer.
public struct PushOutcome: Sendable, Hashable {
    public var accepted: Int
    public var duplicates: Int
    public var highestSeq: Int64
    /// Entries the account's log has gained since its last compaction (automatic compaction's trigger).
    public var entriesSinceCompaction: Int64
    /// The cursor generation, when the store read it in the push's own transaction (SQLite: saves a
    /// separate read per push); `nil` when the caller must ask ``SyncStore/cursorGeneration()``.
    public var generation: String?

    public init(
        accepted: Int, duplicates: Int, highestSeq: Int64, entriesSinceCompaction: Int64 = 0, generation: String? = nil
    ) {
        self.accepted = accepted
        self.duplicates = duplicates
        self.highestSeq = highestSeq
        self.entriesSinceCompaction = entriesSinceCompaction
        self.generation = generation
    }
}
