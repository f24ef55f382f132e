import TipSyncCore

/// The server's storage: accounts, device tokens, each account's change log and its cursors.
/// SQLite implements it (``SQLiteSyncStore``); a PostgreSQL backend implements the same protocol.
/// Implementations must hand out cursors below which every transaction has committed.
public protocol SyncStore: Sendable {
    /// Creates the schema or upgrades it; run before serving.
    func migrate() async throws
    /// Creates an account; throws if the name is taken. Returns its id.
    func createAccount(name: String) async throws -> Int64
    /// Creates a device (if new) in the named account and a new token for it. Returns the token.
    func createToken(accountName: String, device: String) async throws -> String
    /// The id of the account with this name (names compare by code points), or `nil`.
    func accountID(named name: String) async throws -> Int64?
    /// The device a token hash belongs to.
    func identity(forTokenHash hash: String) async throws -> DeviceIdentity?
    /// The highest sequence number stored for a device of the account, `nil` for an unknown device.
    func highestSeq(account: Int64, device: String) async throws -> Int64?
    /// Stores one device's batch atomically: changes at or below the device's highest stored sequence
    /// number are duplicates (ignored); the rest must continue it without gaps, or nothing is stored
    /// and ``SyncError`` `sequence_gap` is thrown.
    func push(_ changes: [Change], from identity: DeviceIdentity) async throws -> PushOutcome
    /// Up to `limit` changes of the account after `cursor`, in log order, with the database's cursor
    /// generation and the end of the account's log, read in the same transaction.
    func pull(account: Int64, after cursor: Int64, limit: Int) async throws -> PullPage
    /// Replaces the cursor generation (part of every cursor handed out) with a new random one, so
    /// every cursor minted before is refused (`invalid_cursor`) and devices pull from the start.
    /// Operators run it after restoring a backup. Returns the new generation.
    func rotateCursorGeneration() async throws -> String
    /// The current cursor generation.
    func cursorGeneration() async throws -> String
    /// Drops superseded log entries (``LogCompaction``). Returns how many.
    func compact(account: Int64) async throws -> Int
    /// Number of log entries of the account (for tests and operators).
    func logCount(account: Int64) async throws -> Int
    /// Calls `onChange` with the account of every push committed by any server instance on this
    /// database, until cancelled (PostgreSQL: `LISTEN`). Returns at once for single-instance
    /// backends (SQLite), where the in-process notifier already knows every push.
    func watchChanges(_ onChange: @escaping @Sendable (Int64) -> Void) async throws
}

extension SyncStore {
    public func watchChanges(_ onChange: @escaping @Sendable (Int64) -> Void) async throws {}
}

public struct PushOutcome: Sendable, Hashable {
    public var accepted: Int
    public var duplicates: Int
    public var highestSeq: Int64

    public init(accepted: Int, duplicates: Int, highestSeq: Int64) {
        self.accepted = accepted
        self.duplicates = duplicates
        self.highestSeq = highestSeq
    }
}

public struct PullPage: Sendable, Hashable {
    /// Canonical JSON of each change, in log order.
    public var bodies: [String]
    /// The log position after this page (the request's position when the page is empty).
    public var cursor: Int64
    public var more: Bool
    /// The requested cursor predated a compaction: this page restarts from the beginning.
    public var snapshot: Bool
    /// The highest position this database can have handed out for the account: its latest stored
    /// entry or its latest compacted one, whichever is higher. A readable cursor beyond it comes from
    /// a log that has since been rewound (a restored backup).
    public var logEnd: Int64
    /// The database's cursor generation (``SyncStore/rotateCursorGeneration()``).
    public var generation: String

    public init(bodies: [String], cursor: Int64, more: Bool, snapshot: Bool, logEnd: Int64, generation: String) {
        self.bodies = bodies
        self.cursor = cursor
        self.more = more
        self.snapshot = snapshot
        self.logEnd = logEnd
        self.generation = generation
    }
}
