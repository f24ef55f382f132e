import GRDB

/// The sync client's bookkeeping (``SyncProgress``) as rows of the `meta` table.
extension ReplicaDatabase {
    /// The keys ``syncProgress(_:)`` reads.
    private static let syncProgressKeys: [MetaKey] = [
        .pushedSeq, .acknowledgedHighSeq, .serverGeneration, .uncertainSeq, .uncertainGeneration, .pullCursor,
        .clockOffset, .hasSynced, .firstSyncHoldUntil,
    ]

    /// Read in one statement: the sync client reads it for every page it merges and every round.
    static func syncProgress(_ db: Database) throws -> SyncProgress {
        let values = try meta(syncProgressKeys, db)
        func number(_ key: MetaKey) -> Int64? { values[key].flatMap { Int64($0) } }
        return SyncProgress(
            pushedSeq: number(.pushedSeq) ?? 0,
            acknowledgedHighSeq: number(.acknowledgedHighSeq) ?? 0,
            serverGeneration: values[.serverGeneration],
            uncertainPush: number(.uncertainSeq).map {
                SyncProgress.UncertainPush(seq: $0, generation: values[.uncertainGeneration])
            },
            pullCursor: values[.pullCursor],
            clockOffset: number(.clockOffset) ?? 0,
            // A replica from before the flag existed that holds a cursor has synced.
            hasSynced: values[.hasSynced].map { $0 == "1" } ?? (values[.pullCursor] != nil),
            firstSyncHoldUntil: number(.firstSyncHoldUntil))
    }

    /// Writes what differs between `progress` and `old` (what the same transaction read).
    static func save(_ progress: SyncProgress, over old: SyncProgress, _ db: Database) throws {
        let rows: [(MetaKey, String?, String?)] = [
            (.pushedSeq, String(progress.pushedSeq), String(old.pushedSeq)),
            (.acknowledgedHighSeq, String(progress.acknowledgedHighSeq), String(old.acknowledgedHighSeq)),
            (.serverGeneration, progress.serverGeneration, old.serverGeneration),
            (.uncertainSeq, progress.uncertainPush.map { String($0.seq) }, old.uncertainPush.map { String($0.seq) }),
            (.uncertainGeneration, progress.uncertainPush?.generation, old.uncertainPush?.generation),
            (.pullCursor, progress.pullCursor, old.pullCursor),
            (.clockOffset, String(progress.clockOffset), String(old.clockOffset)),
            (
                .firstSyncHoldUntil, progress.firstSyncHoldUntil.map(String.init),
                old.firstSyncHoldUntil.map(String.init)
            ),
        ]
        for (key, value, before) in rows where value != before {
            try setMeta(key, value, db)
        }
        // Written whenever the cursor moves too: without the row, a cursor reads as "has synced".
        if progress.hasSynced != old.hasSynced || progress.pullCursor != old.pullCursor {
            try setMeta(.hasSynced, progress.hasSynced ? "1" : "0", db)
        }
    }
}
