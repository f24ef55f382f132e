package import TipSyncCore
package import TipSyncServerBasics

/// Each account's change log: pushes, pulls and their cursors, compaction, cross-instance wake-ups.
/// Backends do the I/O; the rules they apply are written once above them (``PushPlan``,
/// ``PullPage/isSnapshot(cursor:compactedThrough:)``). Implementations must hand out cursors below
/// which every transaction has committed.
package protocol ChangeLogStore: Sendable {
    /// The highest sequence number stored for a device of the account, `nil` for an unknown device.
    func highestSeq(account: Int64, device: String) async throws -> Int64?
    /// Stores one device's batch atomically: changes at or below the device's highest stored sequence
    /// number are duplicates (ignored); the rest must continue it without gaps, or nothing is stored
    /// and ``SyncError`` `sequence_gap` is thrown. With `token`, first confirms in the same
    /// transaction that it still names `identity`, and throws ``UnconfirmedToken/Gone``, storing
    /// nothing, when it does not.
    func push(_ pushed: PushedChanges, from identity: DeviceIdentity, confirming token: UnconfirmedToken?)
        async throws -> PushOutcome
    /// Up to `limit` changes of the account after `cursor`, in log order, with the database's cursor
    /// generation and the end of the account's log, read in the same transaction — and with `device`,
    /// that device's highest stored sequence number (``PullPage/deviceHighestSeq``). With `token`,
    /// first confirms in that transaction that it still names a device of the account, and throws
    /// ``UnconfirmedToken/Gone`` when it does not.
    ///
    /// With `keptPages` (the caller will send the answer compressed), a page kept compressed after
    /// the account's latest compaction that answers the pull exactly is returned as it was kept
    /// (``PullPage/kept``, ``KeptStatePage``) instead of being read from the log.
    func pull(
        account: Int64, after cursor: Int64, limit: Int, device: String?, confirming token: UnconfirmedToken?,
        keptPages: Bool
    ) async throws -> PullPage
    /// After a compaction: the account's full pages from its beginning, as pulls asking
    /// ``KeptStatePage/pageLimit`` read them, in one transaction, with the account's latest
    /// compaction (``StatePages/builtFor``). Backends that keep no pages return none.
    func statePages(account: Int64) async throws -> StatePages
    /// Replaces the account's kept pages with `pages`, in one transaction, unless its latest
    /// compaction is no longer `builtFor` (compacted again, or erased): then keeps nothing and
    /// returns `false`. Erasing an account deletes its kept pages with its log.
    func keepStatePages(_ pages: [KeptStatePage], account: Int64, builtFor: Int64) async throws -> Bool
    /// Replaces the cursor generation (part of every cursor handed out) with a new random one, so
    /// every cursor minted before is refused (`invalid_cursor`) and devices pull from the start.
    /// Operators run it after restoring a backup. Returns the new generation.
    func rotateCursorGeneration() async throws -> String
    /// The current cursor generation.
    func cursorGeneration() async throws -> String
    /// The account's whole log in log order, decoded with its positions, read without holding the
    /// account (pushes and pulls go on meanwhile): what compaction decides on (``LogCompactor``).
    func logEntries(account: Int64) async throws -> [LogCompaction.Entry]
    /// In one transaction, unless the account no longer holds exactly `expected` entries at or
    /// below `through` (another compaction or an erasure deleted some since they were read — then
    /// nothing changes and it returns `false`): deletes the entries at `positions` and records the
    /// compaction (``PullPage/isSnapshot(cursor:compactedThrough:)`` reads it). The decision is
    /// ``LogCompactor``'s, written once above the backends.
    func dropCompacted(_ positions: [Int64], account: Int64, through: Int64, expecting expected: Int) async throws
        -> Bool
    /// Number of log entries of the account (for tests and operators).
    func logCount(account: Int64) async throws -> Int
    /// Calls `onChange` with every push, revocation and erasure committed by any server instance on
    /// this database, until cancelled (PostgreSQL: `LISTEN`). Returns at once for single-instance
    /// backends (SQLite), where the in-process notifier already knows every push.
    func watchChanges(_ onChange: @escaping @Sendable (StoreEvent) -> Void) async throws
    /// Until the service group shuts down: every `interval`, moves what commits left for later
    /// out of the writers' way (SQLite: checkpoints the write-ahead log on a connection of its own,
    /// so that no push waits for a checkpoint's copy and sync). Returns at once for backends with
    /// nothing to do (PostgreSQL checkpoints in its own processes).
    func checkpointInBackground(every interval: Duration) async throws
}

extension ChangeLogStore {
    /// ``push(_:from:confirming:)`` for an identity the store itself looked up.
    package func push(_ changes: [Change], from identity: DeviceIdentity) async throws -> PushOutcome {
        try await push(PushedChanges(changes), from: identity, confirming: nil)
    }

    /// ``push(_:from:confirming:)`` with the changes encoded here.
    package func push(_ changes: [Change], from identity: DeviceIdentity, confirming token: UnconfirmedToken?)
        async throws -> PushOutcome
    {
        try await push(PushedChanges(changes), from: identity, confirming: token)
    }

    /// A pull read from the log, never from kept pages (``KeptStatePage``).
    package func pull(
        account: Int64, after cursor: Int64, limit: Int, device: String?, confirming token: UnconfirmedToken?
    ) async throws -> PullPage {
        try await pull(
            account: account, after: cursor, limit: limit, device: device, confirming: token, keptPages: false)
    }

    /// ``pull(account:after:limit:device:confirming:)`` without a device's highest sequence number.
    package func pull(account: Int64, after cursor: Int64, limit: Int, confirming token: UnconfirmedToken?)
        async throws -> PullPage
    {
        try await pull(account: account, after: cursor, limit: limit, device: nil, confirming: token)
    }

    /// ``pull(account:after:limit:device:confirming:)`` for an identity the store itself looked up,
    /// without a device's highest sequence number.
    package func pull(account: Int64, after cursor: Int64, limit: Int) async throws -> PullPage {
        try await pull(account: account, after: cursor, limit: limit, device: nil, confirming: nil)
    }

    /// The account's whole log in log order, handed to `body` a page of canonical JSON changes at a
    /// time (what `GET /admin/v1/accounts/{account}/export` and `tipsync-server accounts export` send).
    /// Returns the position the log was read through.
    @discardableResult
    package func exportLog(account: Int64, pageSize: Int = 1000, _ body: ([String]) async throws -> Void)
        async throws -> Int64
    {
        var cursor: Int64 = 0
        while true {
            let page = try await pull(account: account, after: cursor, limit: pageSize)
            if !page.bodies.isEmpty { try await body(page.bodies) }
            cursor = page.cursor
            if !page.more { return cursor }
        }
    }

    /// Every change of the account's log in log order, decoded, handed to `body` one at a time: how
    /// the server reads a whole log to fold it with the devices' merge (the console's account page,
    /// tip usage, the simulator's checks). Returns the position the log was read through.
    @discardableResult
    package func forEachChange(account: Int64, _ body: (Change) throws -> Void) async throws -> Int64 {
        try await exportLog(account: account, pageSize: 5000) { bodies in
            for text in bodies { try body(try JSONCoding.decode(Change.self, from: text.utf8)) }
        }
    }

    package func watchChanges(_ onChange: @escaping @Sendable (StoreEvent) -> Void) async throws {}

    package func checkpointInBackground(every interval: Duration) async throws {}
}
