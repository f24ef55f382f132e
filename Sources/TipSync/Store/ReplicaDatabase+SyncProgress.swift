import GRDB

/// The sync client's bookkeeping (``SyncProgress``) as rows of the `meta` table.
extension ReplicaDatabase {
    static func syncProgress(_ db: Database) throws -> SyncProgress {
        func number(_ key: MetaKey) throws -> Int64? { try meta(key, db).flatMap { Int64($0) } }
        return SyncProgress(
            pushedSeq: try number(.pushedSeq) ?? 0,
            acknowledgedHighSeq: try number(.acknowledgedHighSeq) ?? 0,
            serverGeneration: try meta(.serverGeneration, db),
            uncertainPush: try number(.uncertainSeq).map {
                SyncProgress.UncertainPush(seq: $0, generation: try meta(.uncertainGeneration, db))
            },
            pullCursor: try meta(.pullCursor, db),
            clockOffset: try number(.clockOffset) ?? 0)
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
        ]
        for (key, value, before) in rows where value != before {
            try setMeta(key, value, db)
        }
    }
}
