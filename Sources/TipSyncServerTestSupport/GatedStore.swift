import Foundation
package import Synchronization
package import TipSyncCore
package import TipSyncServer

/// A store whose pushes wait at the door until the test lets them through (everything else passes
/// straight to the SQLite store).
package struct GatedStore: SyncStore {
    package let base: SQLiteSyncStore
    /// Whether recording pull positions waits at the gate too (pushes always do).
    package let gatesRecordedPulls: Bool
    /// Whether reading an account's details waits at the gate after it has read them.
    package let gatesAccountDetails: Bool
    private let inside: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)
    private let open: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)
    private let lookups = Lookups()

    package final class Lookups: Sendable {
        package let count = Atomic(0)
    }

    /// How many times a device token was looked up (``identity(forTokenHash:)``).
    package var tokenLookups: Int { lookups.count.load(ordering: .relaxed) }

    package init(base: SQLiteSyncStore, gatesRecordedPulls: Bool = false, gatesAccountDetails: Bool = false) {
        self.base = base
        self.gatesRecordedPulls = gatesRecordedPulls
        self.gatesAccountDetails = gatesAccountDetails
        inside = AsyncStream<Void>.makeStream()
        open = AsyncStream<Void>.makeStream()
    }

    package func waitUntilAPushIsInside() async {
        var iterator = inside.stream.makeAsyncIterator()
        _ = await iterator.next()
    }

    package func letPushesThrough() { open.continuation.finish() }

    package func push(_ pushed: PushedChanges, from identity: DeviceIdentity, confirming token: UnconfirmedToken?)
        async throws -> PushOutcome
    {
        inside.continuation.yield()
        for await _ in open.stream {}
        return try await base.push(pushed, from: identity, confirming: token)
    }

    package func migrate() async throws { try await base.migrate() }
    package func schemaVersion() async throws -> String { try await base.schemaVersion() }
    package func createAccount(name: String) async throws -> Int64 { try await base.createAccount(name: name) }
    package func insertToken(hash: String, accountName: String, device: String, at now: Int64) async throws -> Bool {
        try await base.insertToken(hash: hash, accountName: accountName, device: device, at: now)
    }
    package func accountID(named name: String) async throws -> Int64? { try await base.accountID(named: name) }
    package func accountName(id: Int64) async throws -> String? { try await base.accountName(id: id) }
    package func identity(forTokenHash hash: String) async throws -> DeviceIdentity? {
        lookups.count.add(1, ordering: .relaxed)
        return try await base.identity(forTokenHash: hash)
    }

    package func newestTokens(limit: Int) async throws -> [UnconfirmedToken] {
        try await base.newestTokens(limit: limit)
    }

    package func wasErased(tokenHash hash: String) async throws -> Bool {
        try await base.wasErased(tokenHash: hash)
    }

    package func quietDevices(seenBefore: Int64, limit: Int) async throws -> [QuietDevice] {
        try await base.quietDevices(seenBefore: seenBefore, limit: limit)
    }
    package func highestSeq(account: Int64, device: String) async throws -> Int64? {
        try await base.highestSeq(account: account, device: device)
    }
    package func pull(
        account: Int64, after cursor: Int64, limit: Int, device: String?, confirming token: UnconfirmedToken?,
        keptPages: Bool
    ) async throws -> PullPage {
        try await base.pull(
            account: account, after: cursor, limit: limit, device: device, confirming: token, keptPages: keptPages)
    }
    package func statePages(account: Int64) async throws -> StatePages { try await base.statePages(account: account) }
    package func keepStatePages(_ pages: [KeptStatePage], account: Int64, builtFor: Int64) async throws -> Bool {
        try await base.keepStatePages(pages, account: account, builtFor: builtFor)
    }
    package func logEntries(account: Int64) async throws -> [LogCompaction.Entry] {
        try await base.logEntries(account: account)
    }
    package func dropCompacted(_ positions: [Int64], account: Int64, through: Int64, expecting expected: Int)
        async throws
        -> Bool
    { try await base.dropCompacted(positions, account: account, through: through, expecting: expected) }
    package func rotateCursorGeneration() async throws -> String { try await base.rotateCursorGeneration() }
    package func cursorGeneration() async throws -> String { try await base.cursorGeneration() }
    package func logCount(account: Int64) async throws -> Int { try await base.logCount(account: account) }
    package func ensureAccount(name: String, at now: Int64) async throws -> (id: Int64, created: Bool) {
        try await base.ensureAccount(name: name, at: now)
    }
    package func accounts(after: String?, limit: Int) async throws -> [AccountSummary] {
        try await base.accounts(after: after, limit: limit)
    }
    package func accountDetails(name: String) async throws -> AccountDetails? {
        let details = try await base.accountDetails(name: name)
        if gatesAccountDetails {
            inside.continuation.yield()
            for await _ in open.stream {}
        }
        return details
    }
    package func eraseAccount(name: String, at now: Int64) async throws -> (id: Int64, logEntries: Int)? {
        try await base.eraseAccount(name: name, at: now)
    }
    package func revokeTokens(accountName: String, device: String, at now: Int64) async throws -> (
        account: Int64, tokens: Int
    )? {
        try await base.revokeTokens(accountName: accountName, device: device, at: now)
    }
    package func recordSeen(_ seen: [DeviceIdentity: Int64]) async throws { try await base.recordSeen(seen) }
    package func signIn(accountName: String, device: String, issuedAt: Int64?, at now: Int64) async throws
        -> SignInResult
    {
        try await base.signIn(accountName: accountName, device: device, issuedAt: issuedAt, at: now)
    }
    package func insertAdminKey(hash: String, name: String, at now: Int64) async throws -> Bool {
        try await base.insertAdminKey(hash: hash, name: name, at: now)
    }
    package func adminKeys() async throws -> [AdminKeyRecord] { try await base.adminKeys() }
    package func revokeAdminKey(name: String) async throws -> Bool { try await base.revokeAdminKey(name: name) }
    package func adminKeyName(forHash hash: String) async throws -> String? {
        try await base.adminKeyName(forHash: hash)
    }
    package func insertConsoleSession(_ session: ConsoleSessionRecord, now: Int64) async throws {
        try await base.insertConsoleSession(session, now: now)
    }
    package func consoleSession(idHash: String, now: Int64) async throws -> ConsoleSessionRecord? {
        try await base.consoleSession(idHash: idHash, now: now)
    }
    package func deleteConsoleSession(idHash: String) async throws {
        try await base.deleteConsoleSession(idHash: idHash)
    }
    package func accountsWithNewChanges(after: Int64, limit: Int) async throws -> [Int64] {
        try await base.accountsWithNewChanges(after: after, limit: limit)
    }
    package func tipUsage(account: Int64) async throws -> [TipUsage] { try await base.tipUsage(account: account) }
    package func saveTipUsage(_ usage: [TipUsage], account: Int64, through position: Int64) async throws -> Bool {
        try await base.saveTipUsage(usage, account: account, through: position)
    }
    package func tipUsageTotals() async throws -> [TipUsageTotals] { try await base.tipUsageTotals() }
    package func overview() async throws -> StoreOverview { try await base.overview() }
    package func recordContexts(_ contexts: [DeviceIdentity: String]) async throws {
        try await base.recordContexts(contexts)
    }
    package func recordPulled(_ pulled: [DeviceIdentity: Int64]) async throws {
        if gatesRecordedPulls {
            inside.continuation.yield()
            for await _ in open.stream {}
        }
        try await base.recordPulled(pulled)
    }
    package func catalogJSON() async throws -> String? { try await base.catalogJSON() }
    package func insertCatalogVersion(_ text: String, uploadedBy: String, at now: Int64, restoredFrom: Int64?)
        async throws
        -> Int64
    {
        try await base.insertCatalogVersion(text, uploadedBy: uploadedBy, at: now, restoredFrom: restoredFrom)
    }
    package func catalogVersions() async throws -> [CatalogVersionRecord] { try await base.catalogVersions() }
    package func latestCatalogVersion() async throws -> Int64? { try await base.latestCatalogVersion() }
    package func tipUsage(tip: String) async throws -> [TipUsage] { try await base.tipUsage(tip: tip) }
    package func experimentParticipants(experiment: String) async throws -> [(account: String, usage: TipUsage)] {
        try await base.experimentParticipants(experiment: experiment)
    }
}
