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
    /// Drops superseded log entries (``LogCompaction``) and records when. Returns how many.
    func compact(account: Int64) async throws -> Int
    /// Frees memory that refills on demand (page caches, idle connections): called when the server
    /// has gone quiet (``MemoryRelease``). Does nothing by default.
    func releaseMemory() async
    /// Number of log entries of the account (for tests and operators).
    func logCount(account: Int64) async throws -> Int
    /// Calls `onChange` with every push, revocation and erasure committed by any server instance on
    /// this database, until cancelled (PostgreSQL: `LISTEN`). Returns at once for single-instance
    /// backends (SQLite), where the in-process notifier already knows every push.
    func watchChanges(_ onChange: @escaping @Sendable (StoreEvent) -> Void) async throws

    // MARK: Administration: the admin API, the CLI and the console share these.

    /// Creates the account unless one has this name. Returns its id and whether it was created.
    func ensureAccount(name: String, at now: Int64) async throws -> (id: Int64, created: Bool)
    /// Up to `limit` accounts ordered by name (UTF-8 bytes), starting after the name `after`.
    func accounts(after: String?, limit: Int) async throws -> [AccountSummary]
    /// The account's log counters and devices (``DeviceDetails/live`` is left `false`), or `nil`.
    func accountDetails(name: String) async throws -> AccountDetails?
    /// Erases the account's log, devices and tokens (a person's right to erasure). Keeps only a hash
    /// of the name and the time, so that credentials issued before the erasure stay refused.
    /// Returns the account's id and how many log entries were erased, or `nil` for no such account.
    func eraseAccount(name: String, at now: Int64) async throws -> (id: Int64, logEntries: Int)?
    /// Deletes every token of the device and refuses JWTs issued before `now` for it. Returns the
    /// account's id and how many tokens were deleted, or `nil` for no such account or device.
    func revokeTokens(accountName: String, device: String, at now: Int64) async throws -> (
        account: Int64, tokens: Int
    )?
    /// Records when devices were last seen; an earlier time than the stored one is ignored.
    func recordSeen(_ seen: [DeviceIdentity: Int64]) async throws
    /// Records the log position each device's latest pull reached.
    func recordPulled(_ pulled: [DeviceIdentity: Int64]) async throws
    /// The identity a signed JWT names (`sub`, `device`): creates the account and device on first
    /// use, unless the account was erased, or the device's tokens revoked, at or after `issuedAt`.
    func signIn(accountName: String, device: String, issuedAt: Int64?, at now: Int64) async throws -> SignInResult

    /// Creates an admin key (`tsa_…`), returned once; only its hash is stored. The name defaults to
    /// the key's first 12 characters.
    func createAdminKey(name: String?, at now: Int64) async throws -> (name: String, key: String)
    func adminKeys() async throws -> [AdminKeyRecord]
    /// Deletes the named admin key; `false` if there is none.
    func revokeAdminKey(name: String) async throws -> Bool
    /// The name of the admin key with this hash, or `nil`.
    func adminKeyName(forHash hash: String) async throws -> String?

    // MARK: Tip usage: kept by `TipUsageSummarizer`, shown by the console's tips page.

    /// Accounts whose log grew since their tip usage was last derived: at most `limit`, with ids
    /// above `after`, in id order (so a pass reaches every account, however busy the first ones are).
    func accountsWithNewChanges(after: Int64, limit: Int) async throws -> [Int64]
    /// The account's tip usage as last derived.
    func tipUsage(account: Int64) async throws -> [TipUsage]
    /// Replaces the account's tip usage, derived from its log through `position`; `false` (and
    /// nothing stored) when the account no longer exists.
    func saveTipUsage(_ usage: [TipUsage], account: Int64, through position: Int64) async throws -> Bool
    /// Every tip across all accounts, by tip id.
    func tipUsageTotals() async throws -> [TipUsageTotals]
    /// Counts and sizes for the console's overview.
    func overview() async throws -> StoreOverview
    /// The uploaded tip catalog's JSON (`tipsync-server catalog put`), if any: the console shows
    /// its titles and each tip's status.
    func catalogJSON() async throws -> String?
    /// Stores the catalog's JSON (already validated), replacing the previous one.
    func putCatalogJSON(_ text: String) async throws
}

extension SyncStore {
    public func releaseMemory() async {}

    /// The account's whole log in log order, handed to `body` a page of canonical JSON changes at a
    /// time (what `GET /admin/v1/accounts/{account}/export` and `tipsync-server accounts export` send).
    public func exportLog(account: Int64, pageSize: Int = 1000, _ body: ([String]) async throws -> Void)
        async throws
    {
        var cursor: Int64 = 0
        while true {
            let page = try await pull(account: account, after: cursor, limit: pageSize)
            if !page.bodies.isEmpty { try await body(page.bodies) }
            cursor = page.cursor
            if !page.more { return }
        }
    }

    public func watchChanges(_ onChange: @escaping @Sendable (StoreEvent) -> Void) async throws {}
}

/// What ``SyncStore/signIn(accountName:device:issuedAt:at:)`` decided.
public enum SignInResult: Sendable, Hashable {
    case identity(DeviceIdentity)
    /// The account was erased after the credential was issued.
    case erased
    /// The device's tokens were revoked after the credential was issued.
    case revoked
}

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

extension SyncStore {
    /// Superseded entries deleted per write transaction while compacting: a push to the account
    /// waits for one chunk's delete, never for the whole compaction.
    static var compactionChunk: Int { 1000 }
}
