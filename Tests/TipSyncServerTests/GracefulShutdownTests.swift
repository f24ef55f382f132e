import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing
import TipSync
import TipSyncServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What SIGTERM does (`tipsync-server serve` runs the application in a `ServiceGroup` that turns
/// SIGTERM into a graceful shutdown): a push already being handled finishes and is answered, live
/// streams end cleanly, and the server stops.
@Suite(.timeLimit(.minutes(5))) struct GracefulShutdownTests {
    @Test func aPushInFlightFinishesAndLiveStreamsCloseCleanly() async throws {
        let fixture = try await ServerFixture.make()
        let store = GatedStore(base: fixture.store)
        let notifier = ChangeNotifier()
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = buildApplication(
            configuration: .test,
            dependencies: ServerDependencies(
                store: store, notifier: notifier,
                onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) }))
        let group = ServiceGroup(
            configuration: .init(services: [app], logger: Logger(label: "graceful-shutdown-test")))
        let server = Task { try await group.run() }

        var portIterator = ports.makeAsyncIterator()
        let port = try #require(await portIterator.next())
        let base = URL(string: "http://127.0.0.1:\(port)")!
        let session = URLSession(configuration: .ephemeral)

        // A live stream, open until the server goes away.
        var liveRequest = URLRequest(url: base.appendingPathComponent("v1/live"))
        liveRequest.setValue("Bearer \(fixture.tokens["laptop"]!)", forHTTPHeaderField: "Authorization")
        let live = Task { try await session.data(for: liveRequest) }
        while notifier.count == 0 { await Task.yield() }

        // A push, held inside the store until shutdown has begun.
        var pushRequest = URLRequest(url: base.appendingPathComponent("v1/push"))
        pushRequest.httpMethod = "POST"
        pushRequest.setValue("Bearer \(fixture.tokens["phone"]!)", forHTTPHeaderField: "Authorization")
        pushRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        pushRequest.httpBody = try JSONCoding.encoder.encode(
            PushRequest(changes: [
                change("phone", 1, .eligibility(tip: "t", state: .invalidated(.tipClosed))),
                change("phone", 2, .parameter(id: "p", value: .int(2))),
            ]))
        let push = Task { try await session.data(for: pushRequest) }
        await store.waitUntilAPushIsInside()

        await group.triggerGracefulShutdown()
        store.letPushesThrough()

        // The push is answered in full, and committed.
        let (pushBody, pushResponse) = try await push.value
        #expect((pushResponse as? HTTPURLResponse)?.statusCode == 200)
        let outcome = try JSONCoding.decode(PushResponse.self, from: pushBody)
        #expect(outcome.accepted == 2 && outcome.highestSeq == 2)
        // The live stream ends as a stream should (no reset, no error) after its first event.
        let (liveBody, liveResponse) = try await live.value
        #expect((liveResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: liveBody, as: UTF8.self).hasPrefix("event: ready\n"))
        // And the server stops by itself.
        try await server.value
        #expect(try await fixture.store.logCount(account: fixture.accountID) == 2)
        #expect(try await fixture.store.highestSeq(account: fixture.accountID, device: "phone") == 2)
    }
}

/// A store whose pushes wait at the door until the test lets them through (everything else passes
/// straight to the SQLite store).
struct GatedStore: SyncStore {
    let base: SQLiteSyncStore
    /// Whether recording pull positions waits at the gate too (pushes always do).
    let gatesRecordedPulls: Bool
    /// Whether reading an account's details waits at the gate after it has read them.
    let gatesAccountDetails: Bool
    private let inside: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)
    private let open: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)
    private let lookups = Lookups()

    final class Lookups: Sendable {
        let count = Atomic(0)
    }

    /// How many times a device token was looked up (``identity(forTokenHash:)``).
    var tokenLookups: Int { lookups.count.load(ordering: .relaxed) }

    init(base: SQLiteSyncStore, gatesRecordedPulls: Bool = false, gatesAccountDetails: Bool = false) {
        self.base = base
        self.gatesRecordedPulls = gatesRecordedPulls
        self.gatesAccountDetails = gatesAccountDetails
        inside = AsyncStream<Void>.makeStream()
        open = AsyncStream<Void>.makeStream()
    }

    func waitUntilAPushIsInside() async {
        var iterator = inside.stream.makeAsyncIterator()
        _ = await iterator.next()
    }

    func letPushesThrough() { open.continuation.finish() }

    func push(_ pushed: PushedChanges, from identity: DeviceIdentity, confirming token: UnconfirmedToken?)
        async throws -> PushOutcome
    {
        inside.continuation.yield()
        for await _ in open.stream {}
        return try await base.push(pushed, from: identity, confirming: token)
    }

    func migrate() async throws { try await base.migrate() }
    func schemaVersion() async throws -> String { try await base.schemaVersion() }
    func createAccount(name: String) async throws -> Int64 { try await base.createAccount(name: name) }
    func insertToken(hash: String, accountName: String, device: String, at now: Int64) async throws -> Bool {
        try await base.insertToken(hash: hash, accountName: accountName, device: device, at: now)
    }
    func accountID(named name: String) async throws -> Int64? { try await base.accountID(named: name) }
    func accountName(id: Int64) async throws -> String? { try await base.accountName(id: id) }
    func identity(forTokenHash hash: String) async throws -> DeviceIdentity? {
        lookups.count.add(1, ordering: .relaxed)
        return try await base.identity(forTokenHash: hash)
    }

    func wasErased(tokenHash hash: String) async throws -> Bool {
        try await base.wasErased(tokenHash: hash)
    }

    func quietDevices(seenBefore: Int64, limit: Int) async throws -> [QuietDevice] {
        try await base.quietDevices(seenBefore: seenBefore, limit: limit)
    }
    func highestSeq(account: Int64, device: String) async throws -> Int64? {
        try await base.highestSeq(account: account, device: device)
    }
    func pull(
        account: Int64, after cursor: Int64, limit: Int, device: String?, confirming token: UnconfirmedToken?,
        keptPages: Bool
    ) async throws -> PullPage {
        try await base.pull(
            account: account, after: cursor, limit: limit, device: device, confirming: token, keptPages: keptPages)
    }
    func statePages(account: Int64) async throws -> StatePages { try await base.statePages(account: account) }
    func keepStatePages(_ pages: [KeptStatePage], account: Int64, builtFor: Int64) async throws -> Bool {
        try await base.keepStatePages(pages, account: account, builtFor: builtFor)
    }
    func logEntries(account: Int64) async throws -> [LogCompaction.Entry] {
        try await base.logEntries(account: account)
    }
    func dropCompacted(_ positions: [Int64], account: Int64, through: Int64, expecting expected: Int) async throws
        -> Bool
    { try await base.dropCompacted(positions, account: account, through: through, expecting: expected) }
    func rotateCursorGeneration() async throws -> String { try await base.rotateCursorGeneration() }
    func cursorGeneration() async throws -> String { try await base.cursorGeneration() }
    func logCount(account: Int64) async throws -> Int { try await base.logCount(account: account) }
    func ensureAccount(name: String, at now: Int64) async throws -> (id: Int64, created: Bool) {
        try await base.ensureAccount(name: name, at: now)
    }
    func accounts(after: String?, limit: Int) async throws -> [AccountSummary] {
        try await base.accounts(after: after, limit: limit)
    }
    func accountDetails(name: String) async throws -> AccountDetails? {
        let details = try await base.accountDetails(name: name)
        if gatesAccountDetails {
            inside.continuation.yield()
            for await _ in open.stream {}
        }
        return details
    }
    func eraseAccount(name: String, at now: Int64) async throws -> (id: Int64, logEntries: Int)? {
        try await base.eraseAccount(name: name, at: now)
    }
    func revokeTokens(accountName: String, device: String, at now: Int64) async throws -> (account: Int64, tokens: Int)?
    {
        try await base.revokeTokens(accountName: accountName, device: device, at: now)
    }
    func recordSeen(_ seen: [DeviceIdentity: Int64]) async throws { try await base.recordSeen(seen) }
    func signIn(accountName: String, device: String, issuedAt: Int64?, at now: Int64) async throws -> SignInResult {
        try await base.signIn(accountName: accountName, device: device, issuedAt: issuedAt, at: now)
    }
    func insertAdminKey(hash: String, name: String, at now: Int64) async throws -> Bool {
        try await base.insertAdminKey(hash: hash, name: name, at: now)
    }
    func adminKeys() async throws -> [AdminKeyRecord] { try await base.adminKeys() }
    func revokeAdminKey(name: String) async throws -> Bool { try await base.revokeAdminKey(name: name) }
    func adminKeyName(forHash hash: String) async throws -> String? { try await base.adminKeyName(forHash: hash) }
    func insertConsoleSession(_ session: ConsoleSessionRecord, now: Int64) async throws {
        try await base.insertConsoleSession(session, now: now)
    }
    func consoleSession(idHash: String, now: Int64) async throws -> ConsoleSessionRecord? {
        try await base.consoleSession(idHash: idHash, now: now)
    }
    func deleteConsoleSession(idHash: String) async throws { try await base.deleteConsoleSession(idHash: idHash) }
    func accountsWithNewChanges(after: Int64, limit: Int) async throws -> [Int64] {
        try await base.accountsWithNewChanges(after: after, limit: limit)
    }
    func tipUsage(account: Int64) async throws -> [TipUsage] { try await base.tipUsage(account: account) }
    func saveTipUsage(_ usage: [TipUsage], account: Int64, through position: Int64) async throws -> Bool {
        try await base.saveTipUsage(usage, account: account, through: position)
    }
    func tipUsageTotals() async throws -> [TipUsageTotals] { try await base.tipUsageTotals() }
    func overview() async throws -> StoreOverview { try await base.overview() }
    func recordContexts(_ contexts: [DeviceIdentity: String]) async throws {
        try await base.recordContexts(contexts)
    }
    func recordPulled(_ pulled: [DeviceIdentity: Int64]) async throws {
        if gatesRecordedPulls {
            inside.continuation.yield()
            for await _ in open.stream {}
        }
        try await base.recordPulled(pulled)
    }
    func catalogJSON() async throws -> String? { try await base.catalogJSON() }
    func insertCatalogVersion(_ text: String, uploadedBy: String, at now: Int64, restoredFrom: Int64?) async throws
        -> Int64
    {
        try await base.insertCatalogVersion(text, uploadedBy: uploadedBy, at: now, restoredFrom: restoredFrom)
    }
    func catalogVersions() async throws -> [CatalogVersionRecord] { try await base.catalogVersions() }
    func latestCatalogVersion() async throws -> Int64? { try await base.latestCatalogVersion() }
    func tipUsage(tip: String) async throws -> [TipUsage] { try await base.tipUsage(tip: tip) }
    func experimentParticipants(experiment: String) async throws -> [(account: String, usage: TipUsage)] {
        try await base.experimentParticipants(experiment: experiment)
    }
}
