import TipSyncCore
package import TipSyncServerBasics

/// Accounts, devices and their credentials: tokens, JWT sign-in, revocation, erasure, admin keys, and
/// when each device was last seen. The admin API, the CLI and the console share these; the sign-in
/// rule itself is ``SignInResult/decide(identity:revokedAt:erasedAt:issuedAt:)``.
package protocol IdentityStore: Sendable {
    /// Creates an account; throws if the name is taken. Returns its id.
    func createAccount(name: String) async throws -> Int64
    /// Creates the device (if new) in the named account and stores a token hash for it, in one
    /// transaction; `false` (nothing stored) when there is no such account. Issuing the token is
    /// ``createToken(accountName:device:)``'s, written once above the backends.
    func insertToken(hash: String, accountName: String, device: String, at now: Int64) async throws -> Bool
    /// The id of the account with this name (names compare by code points), or `nil`.
    func accountID(named name: String) async throws -> Int64?
    /// The name of the account with this id, or `nil` (`GET /v1/account`).
    func accountName(id: Int64) async throws -> String?
    /// The device a token hash belongs to.
    func identity(forTokenHash hash: String) async throws -> DeviceIdentity?
    /// Whether a token with this hash belonged to an account that was erased since: the device is
    /// answered `401 account_erased`, which ends its sync (protocol.md §6), instead of `unauthorized`,
    /// which it retries.
    func wasErased(tokenHash hash: String) async throws -> Bool
    /// Creates the account unless one has this name. Returns its id and whether it was created.
    func ensureAccount(name: String, at now: Int64) async throws -> (id: Int64, created: Bool)
    /// Up to `limit` accounts ordered by name (UTF-8 bytes), starting after the name `after`.
    func accounts(after: String?, limit: Int) async throws -> [AccountSummary]
    /// The account's log counters and devices (``DeviceDetails/live`` is left `false`), or `nil`.
    func accountDetails(name: String) async throws -> AccountDetails?
    /// Erases the account's log, devices and tokens (a person's right to erasure). Keeps only a hash
    /// of the name and the time, so that credentials issued before the erasure stay refused, and the
    /// hashes of its device tokens (random, naming no one), so that their devices learn the account is
    /// gone and stop.
    /// Returns the account's id and how many log entries were erased, or `nil` for no such account.
    func eraseAccount(name: String, at now: Int64) async throws -> (id: Int64, logEntries: Int)?
    /// Deletes every token of the device and refuses JWTs issued before `now` for it. Returns the
    /// account's id and how many tokens were deleted, or `nil` for no such account or device.
    func revokeTokens(accountName: String, device: String, at now: Int64) async throws -> (
        account: Int64, tokens: Int
    )?
    /// Up to `limit` devices (of any account) last seen before `seenBefore`, or never, the longest
    /// quiet first.
    func quietDevices(seenBefore: Int64, limit: Int) async throws -> [QuietDevice]
    /// Records when devices were last seen; an earlier time than the stored one is ignored.
    func recordSeen(_ seen: [DeviceIdentity: Int64]) async throws
    /// Records what each device last reported of itself (header `TipSync-Context`).
    func recordContexts(_ contexts: [DeviceIdentity: String]) async throws
    /// Records the log position each device's latest pull reached.
    func recordPulled(_ pulled: [DeviceIdentity: Int64]) async throws
    /// The identity a signed JWT names (`sub`, `device`): creates the account and device on first
    /// use, unless the account was erased, or the device's tokens revoked, at or after `issuedAt`.
    func signIn(accountName: String, device: String, issuedAt: Int64?, at now: Int64) async throws -> SignInResult

    /// Stores an admin key's hash under `name`; `false` (nothing stored) when the name is taken.
    /// Issuing the key is ``createAdminKey(name:at:)``'s, written once above the backends.
    func insertAdminKey(hash: String, name: String, at now: Int64) async throws -> Bool
    func adminKeys() async throws -> [AdminKeyRecord]
    /// Deletes the named admin key; `false` if there is none.
    func revokeAdminKey(name: String) async throws -> Bool
    /// The name of the admin key with this hash, or `nil`.
    func adminKeyName(forHash hash: String) async throws -> String?

    /// Stores a console login session (its id hashed), forgetting sessions expired by `now`.
    /// Every instance on the database sees it: the console works behind a plain load balancer and
    /// across restarts (issue 73, item 9).
    func insertConsoleSession(_ session: ConsoleSessionRecord, now: Int64) async throws
    /// The session whose id hashes to `idHash`, unless it expired by `now`; `nil` otherwise.
    func consoleSession(idHash: String, now: Int64) async throws -> ConsoleSessionRecord?
    /// Ends a session (logout), on every instance at once.
    func deleteConsoleSession(idHash: String) async throws

    /// Up to `limit` tokens' hashes and devices, the last created first: what a starting server
    /// remembers so that its devices' first requests need not look their tokens up (each is
    /// confirmed by the operation that uses it: ``UnconfirmedToken``).
    func newestTokens(limit: Int) async throws -> [UnconfirmedToken]
}
