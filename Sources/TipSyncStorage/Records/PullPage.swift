import NIOCore
import TipSyncServerBasics

/// One page of ``ChangeLogStore/pull(account:after:limit:)``: the body of `GET /v1/pull`'s answer.
package struct PullPage: Sendable, Hashable {
    /// Canonical JSON of each change, in log order (empty when ``kept`` holds the page).
    package var changes: ChangeTexts
    /// The page as kept compressed after the account's latest compaction, when the pull asked for
    /// kept pages and one answers it (``KeptStatePage``): its changes are not read from the log.
    package var kept: KeptStatePage?
    /// How many changes the page holds.
    package var count: Int { kept?.count ?? changes.count }
    /// The bytes of change text read from the log for this page: what it cost to read (a kept page
    /// is read whole, already compressed, and counts none).
    package var readBytes: Int { kept == nil ? changes.joined.readableBytes : 0 }
    /// Whether it holds none.
    package var isEmpty: Bool { count == 0 }
    /// Each change's canonical JSON, in log order.
    package var bodies: [String] { changes.bodies }
    /// The log position after this page (the request's position when the page is empty).
    package var cursor: Int64
    package var more: Bool
    /// The requested cursor predated a compaction: this page restarts from the beginning.
    package var snapshot: Bool
    /// The highest position this database can have handed out for the account: its latest stored
    /// entry or its latest compacted one, whichever is higher. A readable cursor beyond it comes from
    /// a log that has since been rewound (a restored backup).
    package var logEnd: Int64
    /// The database's cursor generation (``SyncStore/rotateCursorGeneration()``).
    package var generation: String
    /// The highest sequence number stored from the device the pull named (0: none yet), read with the
    /// page; `nil` when the pull named no device. A pull answer tells the device (`highestSeq`).
    package var deviceHighestSeq: Int64?

    /// The `snapshot` rule, written once for every backend (protocol.md §8): `true` exactly when the
    /// request carried a cursor and compaction has removed entries after it (its position is below
    /// the highest position any compaction removed), so the pages that follow skip entries the
    /// device never saw. Continuing after the cursor is still complete: compaction keeps, for every
    /// entry it drops, the entries that supersede it. (Restarting from the beginning instead made
    /// every page of a log compacted past the page's end restart again, for ever.)
    package static func isSnapshot(cursor: Int64, compactedThrough: Int64) -> Bool {
        cursor > 0 && cursor < compactedThrough
    }

    package init(
        bodies: [String], cursor: Int64, more: Bool, snapshot: Bool, logEnd: Int64, generation: String,
        deviceHighestSeq: Int64? = nil
    ) {
        self.init(
            changes: ChangeTexts(bodies), cursor: cursor, more: more, snapshot: snapshot, logEnd: logEnd,
            generation: generation, deviceHighestSeq: deviceHighestSeq)
    }

    package init(
        changes: ChangeTexts, cursor: Int64, more: Bool, snapshot: Bool, logEnd: Int64, generation: String,
        deviceHighestSeq: Int64? = nil, kept: KeptStatePage? = nil
    ) {
        self.deviceHighestSeq = deviceHighestSeq
        self.changes = changes
        self.kept = kept
        self.cursor = cursor
        self.more = more
        self.snapshot = snapshot
        self.logEnd = logEnd
        self.generation = generation
    }
}
