import Foundation
import NIOCore
import Synchronization
import Testing
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

@Suite struct StorageContractTests {
    /// Account `alice` with device `phone` (a token made for it), in `store`.
    static func alicesPhone(in store: any SyncStore) async throws -> (account: Int64, phone: DeviceIdentity) {
        let account = try await store.createAccount(name: "alice")
        _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
        return (account, DeviceIdentity(accountID: account, device: "phone"))
    }

    /// Console sessions live in the database (issue 73, item 9): stored by their id's hash, seen
    /// until they expire or are deleted, expired ones forgotten as new ones are stored.
    @Test(arguments: Backend.allCases)
    func consoleSessionsAreKeptUntilTheyExpireOrEnd(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let record = ConsoleSessionRecord(
                idHash: TokenHasher.hash("id-1"), adminKeyHash: "k", adminKeyName: "ops", csrf: "c", expiresAt: 100)
            try await store.insertConsoleSession(record, now: 0)
            #expect(try await store.consoleSession(idHash: record.idHash, now: 99) == record)
            #expect(try await store.consoleSession(idHash: record.idHash, now: 100) == nil, "expired")
            #expect(try await store.consoleSession(idHash: TokenHasher.hash("id-2"), now: 0) == nil)
            var other = record
            other.idHash = TokenHasher.hash("id-2")
            other.expiresAt = 500
            try await store.insertConsoleSession(other, now: 200)
            #expect(try await store.consoleSession(idHash: record.idHash, now: 0) == nil, "forgotten once expired")
            try await store.deleteConsoleSession(idHash: other.idHash)
            #expect(try await store.consoleSession(idHash: other.idHash, now: 200) == nil)
        }
    }

    /// An erased account's device tokens are remembered as erased (their hashes only), so their
    /// devices are told `account_erased` and stop (protocol.md §6); revoked ones are not.
    @Test(arguments: Backend.allCases)
    func anErasedAccountsTokensAreKnownAsErased(_ backend: Backend) async throws {
        try await backend.withStore { store in
            _ = try await store.createAccount(name: "alice")
            let erased = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            _ = try await store.createAccount(name: "bob")
            let revoked = try await CredentialIssuance(store).createToken(accountName: "bob", device: "phone")
            _ = try await store.revokeTokens(accountName: "bob", device: "phone", at: 1)
            #expect(try await store.wasErased(tokenHash: TokenHasher.hash(erased)) == false)
            _ = try await store.eraseAccount(name: "alice", at: 2)
            #expect(try await store.wasErased(tokenHash: TokenHasher.hash(erased)))
            #expect(try await store.identity(forTokenHash: TokenHasher.hash(erased)) == nil)
            #expect(try await store.wasErased(tokenHash: TokenHasher.hash(revoked)) == false)
            #expect(try await store.wasErased(tokenHash: TokenHasher.hash("ts_never")) == false)
        }
    }

    @Test(arguments: Backend.allCases)
    func accountsDevicesAndTokens(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let id = try await store.createAccount(name: "alice")
            await #expect(throws: StoreError.self) { try await store.createAccount(name: "alice") }
            let other = try await store.createAccount(name: "bob")
            #expect(other != id)
            let token = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            let second = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            #expect(token != second)
            let identity = try await store.identity(forTokenHash: TokenHasher.hash(token))
            #expect(identity == DeviceIdentity(accountID: id, device: "phone"))
            let unknown = try await store.identity(forTokenHash: TokenHasher.hash("ts_nope"))
            #expect(unknown == nil)
            await #expect(throws: StoreError.self) {
                try await CredentialIssuance(store).createToken(accountName: "carol", device: "x")
            }
            let highest = try await store.highestSeq(account: id, device: "phone")
            #expect(highest == 0)
            let elsewhere = try await store.highestSeq(account: other, device: "phone")
            #expect(elsewhere == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func pushesAreAtomicAndIdempotent(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (account, phone) = try await Self.alicesPhone(in: store)
            // A store may report the cursor generation with the outcome; if it does, it is the current one.
            let generation = try await store.cursorGeneration()
            // It may report what it appended; if it does, exactly the new changes' stored bodies, at the
            // positions after the log's end (the live streams' page for devices at the end).
            func counts(_ outcome: PushOutcome, appended: AppendedEntries? = nil) -> PushOutcome {
                #expect(outcome.generation == nil || outcome.generation == generation)
                #expect(outcome.appended == nil || outcome.appended == appended)
                var counted = outcome
                counted.generation = nil
                counted.appended = nil
                return counted
            }
            func entries(from first: Int64, _ seqs: ClosedRange<Int64>) -> AppendedEntries {
                AppendedEntries(
                    first: first, bodies: parameterChanges(device: "phone", seqs: seqs).map(\.canonicalJSON))
            }
            let first = try await store.push(parameterChanges(device: "phone", seqs: 1...3), from: phone)
            #expect(
                counts(first, appended: entries(from: 1, 1...3))
                    == PushOutcome(accepted: 3, duplicates: 0, highestSeq: 3, entriesSinceCompaction: 3))
            let retried = try await store.push(parameterChanges(device: "phone", seqs: 1...3), from: phone)
            #expect(counts(retried) == PushOutcome(accepted: 0, duplicates: 3, highestSeq: 3))
            let overlapping = try await store.push(parameterChanges(device: "phone", seqs: 2...5), from: phone)
            #expect(
                counts(overlapping, appended: entries(from: 4, 4...5))
                    == PushOutcome(accepted: 2, duplicates: 2, highestSeq: 5, entriesSinceCompaction: 5)
            )
            // A gap stores nothing of the batch.
            await #expect(throws: SyncError.self) {
                try await store.push(
                    parameterChanges(device: "phone", seqs: 6...6) + parameterChanges(device: "phone", seqs: 8...8),
                    from: phone)
            }
            // So does a batch that continues itself but not the device's log (a store may plan a push
            // as continuing the log before it reads the device's highest seq; it must not store it),
            // and the error says which seq the device must send next.
            let skipping = await #expect(throws: SyncError.self) {
                try await store.push(parameterChanges(device: "phone", seqs: 7...8), from: phone)
            }
            #expect(skipping?.code == .sequenceGap)
            #expect(skipping?.expectedSeq == 6)
            let count = try await store.logCount(account: account)
            #expect(count == 5)
            let highest = try await store.highestSeq(account: account, device: "phone")
            #expect(highest == 5)
            // And the device's next push that does continue its log is stored whole.
            let next = try await store.push(parameterChanges(device: "phone", seqs: 6...7), from: phone)
            #expect(
                counts(next, appended: entries(from: 6, 6...7))
                    == PushOutcome(accepted: 2, duplicates: 0, highestSeq: 7, entriesSinceCompaction: 7))
        }
    }

    /// A push or pull told to confirm a token (one the server remembered) goes ahead while the token
    /// names the device, and is refused with ``UnconfirmedToken/Gone``, storing nothing, once it does
    /// not: revoked, or naming another device.
    @Test(arguments: Backend.allCases)
    func aPushOrPullConfirmsItsTokenInItsTransaction(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let account = try await store.createAccount(name: "alice")
            let token = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "laptop")
            let phone = DeviceIdentity(accountID: account, device: "phone")
            let laptop = DeviceIdentity(accountID: account, device: "laptop")
            let confirmed = UnconfirmedToken(hash: TokenHasher.hash(token), identity: phone)
            let pushed = try await store.push(
                parameterChanges(device: "phone", seqs: 1...2), from: phone, confirming: confirmed)
            #expect(pushed.accepted == 2)
            #expect(
                try await store.pull(account: account, after: 0, limit: 10, confirming: confirmed).bodies.count == 2)
            // The phone's token does not name the laptop.
            let elsewhere = UnconfirmedToken(hash: confirmed.hash, identity: laptop)
            await #expect(throws: UnconfirmedToken.Gone.self) {
                try await store.push(
                    parameterChanges(device: "laptop", seqs: 1...1), from: laptop, confirming: elsewhere)
            }
            _ = try await store.revokeTokens(accountName: "alice", device: "phone", at: 1)
            await #expect(throws: UnconfirmedToken.Gone.self) {
                try await store.push(
                    parameterChanges(device: "phone", seqs: 3...3), from: phone, confirming: confirmed)
            }
            await #expect(throws: UnconfirmedToken.Gone.self) {
                try await store.pull(account: account, after: 0, limit: 10, confirming: confirmed)
            }
            #expect(try await store.logCount(account: account) == 2)
            #expect(try await store.highestSeq(account: account, device: "phone") == 2)
            #expect(try await store.highestSeq(account: account, device: "laptop") == 0)
        }
    }

    /// A pull that names a device reads that device's highest stored seq with its page (a pull
    /// answer's `highestSeq`), also when the page is empty or the device has pushed nothing.
    @Test(arguments: Backend.allCases)
    func aPullThatNamesADeviceReadsItsHighestSeqWithThePage(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let account = try await store.createAccount(name: "alice")
            let other = try await store.createAccount(name: "bob")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "laptop")
            _ = try await CredentialIssuance(store).createToken(accountName: "bob", device: "phone")
            _ = try await store.push(
                parameterChanges(device: "phone", seqs: 1...3),
                from: DeviceIdentity(accountID: account, device: "phone"))
            _ = try await store.push(
                parameterChanges(device: "phone", seqs: 1...1), from: DeviceIdentity(accountID: other, device: "phone"))
            func highest(_ account: Int64, _ device: String?, after cursor: Int64 = 0) async throws -> Int64? {
                try await store.pull(account: account, after: cursor, limit: 2, device: device, confirming: nil)
                    .deviceHighestSeq
            }
            #expect(try await highest(account, "phone") == 3)
            #expect(try await highest(account, "phone", after: 3) == 3)
            #expect(try await highest(account, "laptop") == 0)
            #expect(try await highest(account, "tablet") == 0)
            #expect(try await highest(other, "phone") == 1)
            #expect(try await highest(account, nil) == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func pullsPageThroughTheLogWithServerCursors(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let account = try await store.createAccount(name: "alice")
            for device in ["phone", "laptop"] {
                _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: device)
            }
            _ = try await store.push(
                parameterChanges(device: "phone", seqs: 1...13), from: .init(accountID: account, device: "phone"))
            _ = try await store.push(
                parameterChanges(device: "laptop", seqs: 1...12), from: .init(accountID: account, device: "laptop"))
            var cursor: Int64 = 0
            var bodies: [String] = []
            var pages = 0
            while true {
                let page = try await store.pull(account: account, after: cursor, limit: 10)
                bodies += page.bodies
                pages += 1
                #expect(!page.snapshot)
                #expect(page.cursor >= cursor)
                cursor = page.cursor
                if !page.more { break }
            }
            #expect(bodies.count == 25 && pages == 3)
            #expect(Set(bodies).count == 25)
            let empty = try await store.pull(account: account, after: cursor, limit: 10)
            #expect(
                empty
                    == PullPage(
                        bodies: [], cursor: cursor, more: false, snapshot: false, logEnd: cursor,
                        generation: empty.generation))
            // The generation is part of every cursor: the same on every pull until it is rotated.
            #expect(empty.generation.count == 16 && empty.generation.allSatisfy(\.isHexDigit))
            let rotated = try await store.rotateCursorGeneration()
            #expect(rotated.count == 16 && rotated != empty.generation)
            #expect(try await store.pull(account: account, after: cursor, limit: 10).generation == rotated)
            // Another account sees none of it.
            let bob = try await store.createAccount(name: "bob")
            let bobs = try await store.pull(account: bob, after: 0, limit: 10)
            #expect(bobs.bodies.isEmpty)
        }
    }

    /// A compacted log whose survivors lie below the highest dropped position, read a page at a
    /// time: the pages used to restart from the beginning on every pull (each page's cursor was still
    /// "before the compaction"), so a device with a small page limit never got past the first page.
    /// A pull with no cursor is not a snapshot (issue 12, defect 7: say exactly when it is set).
    @Test(arguments: Backend.allCases)
    func pagesOfACompactedLogMakeProgress(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (account, phone) = try await Self.alicesPhone(in: store)
            // Positions 1–3 are never superseded; 4–20 rewrite one parameter, so 4–19 are dropped.
            let changes = (1...20).map { seq in
                Change(
                    device: "phone", seq: Int64(seq),
                    hlc: HLC(milliseconds: 1_800_000_000_000 + UInt64(seq), counter: 0),
                    operation: .parameter(id: seq <= 3 ? "kept-\(seq)" : "rewritten", value: .int(Int64(seq))))
            }
            _ = try await store.push(changes, from: phone)
            #expect(try await LogCompactor(store: store).compact(account: account) == 16)
            let fresh = try await store.pull(account: account, after: 0, limit: 100)
            #expect(!fresh.snapshot && fresh.bodies.count == 4)
            var cursor: Int64 = 0
            var received = 0
            var pulls = 0
            while pulls < 10 {
                let page = try await store.pull(account: account, after: cursor, limit: 1)
                pulls += 1
                received += page.bodies.count
                cursor = page.cursor
                if !page.more { break }
            }
            #expect(received == 4 && pulls == 4)
        }
    }

    /// After a compaction, each backend keeps the state's full pages compressed (``KeptStatePage``)
    /// and answers a pull asking for them with exactly the page reading the log gives; not after a
    /// later compaction, and not after erasure.
    @Test(arguments: Backend.allCases)
    func theStateIsKeptCompressedAfterACompaction(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (account, phone) = try await Self.alicesPhone(in: store)
            // 1,200 parameters of about 1 KB, each written twice: 1,200 entries kept, about 1.2 MB.
            let long = String(repeating: "x", count: 1000)
            let changes = (1...2400).map { seq in
                Change(
                    device: "phone", seq: Int64(seq),
                    hlc: HLC(milliseconds: 1_800_000_000_000 + UInt64(seq), counter: 0),
                    operation: .parameter(id: "p\(seq % 1200)", value: .string("\(seq)" + long)))
            }
            for start in stride(from: 0, to: changes.count, by: 1000) {
                _ = try await store.push(Array(changes[start..<min(start + 1000, changes.count)]), from: phone)
            }
            #expect(try await LogCompactor(store: store).compact(account: account) == 1200)
            var cursor: Int64 = 0
            var keptPages = 0
            while true {
                let read = try await store.pull(account: account, after: cursor, limit: 5000)
                let page = try await store.pull(
                    account: account, after: cursor, limit: 5000, device: "phone", confirming: nil, keptPages: true)
                #expect(page.cursor == read.cursor && page.more == read.more && page.count == read.count)
                #expect(page.deviceHighestSeq == 2400 && page.logEnd == read.logEnd)
                if let kept = page.kept {
                    keptPages += 1
                    let parts = SplicedBody.make([.deflated(kept.segment)], format: .gzip)
                    #expect(try StrictInflater.inflate(parts, format: .gzip, limit: 1 << 24) == read.changes.joined)
                } else {
                    #expect(page.changes == read.changes)
                }
                cursor = page.cursor
                if !page.more { break }
            }
            #expect(keptPages == 2)
            // A smaller limit reads a smaller page: from the log.
            #expect(
                try await store.pull(
                    account: account, after: 0, limit: 10, device: nil, confirming: nil, keptPages: true
                ).kept == nil)
            // Compacted again (without keeping): the pages no longer describe the log.
            _ = try await store.push(
                [
                    Change(
                        device: "phone", seq: 2401, hlc: HLC(milliseconds: 1_900_000_000_000, counter: 0),
                        operation: .parameter(id: "p1", value: .int(1)))
                ], from: phone)
            let entries = try await store.logEntries(account: account)
            #expect(
                try await store.dropCompacted(
                    [], account: account, through: entries.last!.position, expecting: entries.count))
            #expect(
                try await store.pull(
                    account: account, after: 0, limit: 5000, device: nil, confirming: nil, keptPages: true
                ).kept == nil)
            #expect(try await LogCompactor(store: store).keepState(account: account) == 2)
            _ = try await store.eraseAccount(name: "alice", at: 1)
            let again = try await store.createAccount(name: "alice")
            #expect(
                try await store.pull(
                    account: again, after: 0, limit: 5000, device: nil, confirming: nil, keptPages: true
                )
                .kept == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func aCursorFromBeforeCompactionGetsASnapshot(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (account, phone) = try await Self.alicesPhone(in: store)
            _ = try await store.push(parameterChanges(device: "phone", seqs: 1...30), from: phone)
            let early = try await store.pull(account: account, after: 0, limit: 3)
            let dropped = try await LogCompactor(store: store).compact(account: account)
            #expect(dropped == 23)  // 30 writes to 7 parameters: 7 survive
            let count = try await store.logCount(account: account)
            #expect(count == 7)
            let resumed = try await store.pull(account: account, after: early.cursor, limit: 100)
            #expect(resumed.snapshot && resumed.bodies.count == 7 && !resumed.more)
            // Compaction never lowers the end of the log below a cursor it handed out.
            let whole = try await store.pull(account: account, after: 0, limit: 100)
            #expect(whole.logEnd >= 30 && whole.logEnd >= whole.cursor)
            let again = try await LogCompactor(store: store).compact(account: account)
            #expect(again == 0)
        }
    }

    /// A device's changes are stored once however their pushes come back: a retry after compaction
    /// dropped their entries, and copies of one push arriving together (one group's transaction).
    @Test(arguments: Backend.allCases)
    func retriedPushesStoreNothingAgainAfterCompactionOrTogether(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (account, phone) = try await Self.alicesPhone(in: store)
            _ = try await store.push(parameterChanges(device: "phone", seqs: 1...30), from: phone)
            #expect(try await LogCompactor(store: store).compact(account: account) == 23)
            let retried = try await store.push(parameterChanges(device: "phone", seqs: 1...30), from: phone)
            #expect(retried.accepted == 0 && retried.duplicates == 30 && retried.highestSeq == 30)
            #expect(try await store.logCount(account: account) == 7)
            let copies = try await withThrowingTaskGroup(of: PushOutcome.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await store.push(parameterChanges(device: "phone", seqs: 25...40), from: phone)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(copies.map(\.accepted).sorted() == [0, 0, 0, 0, 0, 0, 0, 10])
            #expect(try await store.logCount(account: account) == 17)
            let page = try await store.pull(account: account, after: 30, limit: 100)
            let seqs = try page.bodies.map { try JSONCoding.decode(Change.self, from: $0.utf8).seq }
            #expect(seqs == Array(31...40))
        }
    }

    /// Compaction deletes in transactions of 1,000 entries (so a push waits for one chunk, not the
    /// whole account): more than two chunks' worth still drops exactly the superseded entries, and a
    /// cursor handed out before it gets a snapshot of exactly the survivors.
    @Test(arguments: Backend.allCases)
    func compactionOfMoreThanOneChunkDropsExactlyTheSuperseded(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (account, phone) = try await Self.alicesPhone(in: store)
            for first in stride(from: Int64(1), through: 2_500, by: 500) {
                _ = try await store.push(parameterChanges(device: "phone", seqs: first...(first + 499)), from: phone)
            }
            let early = try await store.pull(account: account, after: 0, limit: 3)
            // 2,500 writes to 7 parameters
            #expect(try await LogCompactor(store: store).compact(account: account) == 2_493)
            #expect(try await store.logCount(account: account) == 7)
            let resumed = try await store.pull(account: account, after: early.cursor, limit: 100)
            let survivors = try resumed.bodies.map { try JSONCoding.decode(Change.self, from: $0.utf8).seq }
            #expect(resumed.snapshot && Set(survivors) == Set(2_494...2_500))
            #expect(try await LogCompactor(store: store).compact(account: account) == 0)
        }
    }

    /// What each backend does for the policy written once above it (``LogCompactor``,
    /// `IdentityStore+Issuance`): a drop decided on a log that has lost entries since it was read
    /// (another compaction, an erasure) changes nothing; a token for an unknown account and an
    /// admin key under a taken name are not stored.
    @Test(arguments: Backend.allCases)
    func theBackendsPrimitivesRefuseWhatThePolicyMustNotDo(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (account, phone) = try await Self.alicesPhone(in: store)
            _ = try await store.push(parameterChanges(device: "phone", seqs: 1...14), from: phone)
            let entries = try await store.logEntries(account: account)
            #expect(entries.map(\.change.seq) == Array(1...14))
            let through = try #require(entries.last?.position)
            let superseded = LogCompaction.superseded(entries).sorted()
            #expect(superseded.count == 7)
            // Read 14, but the log now holds 13 at or below `through`: refused, nothing dropped.
            #expect(
                try await store.dropCompacted([superseded[0]], account: account, through: through, expecting: 14))
            #expect(
                try await !store.dropCompacted(
                    Array(superseded.dropFirst()), account: account, through: through, expecting: 14))
            #expect(try await store.logCount(account: account) == 13)

            #expect(try await !store.insertToken(hash: "h1", accountName: "nobody", device: "phone", at: 1))
            #expect(try await store.identity(forTokenHash: "h1") == nil)
            #expect(try await store.insertToken(hash: "h2", accountName: "alice", device: "tablet", at: 1))
            #expect(
                try await store.identity(forTokenHash: "h2") == DeviceIdentity(accountID: account, device: "tablet"))
            #expect(try await store.insertAdminKey(hash: "k1", name: "ops", at: 1))
            #expect(try await !store.insertAdminKey(hash: "k2", name: "ops", at: 2))
            #expect(try await store.adminKeyName(forHash: "k1") == "ops")
            #expect(try await store.adminKeyName(forHash: "k2") == nil)
            await #expect(throws: StoreError.self) {
                try await CredentialIssuance(store).createAdminKey(name: "ops", at: 3)
            }
            await #expect(throws: StoreError.self) {
                try await CredentialIssuance(store).createToken(accountName: "nobody", device: "x")
            }
        }
    }

    /// 8 devices push concurrently while a reader pulls: every change is stored once, and a reader
    /// that follows the cursors sees every change — none skipped by a cursor handed out early.
    @Test(arguments: Backend.allCases)
    func concurrentPushersLoseNothingAndCursorsSkipNothing(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let account = try await store.createAccount(name: "alice")
            let devices = (0..<8).map { "device-\($0)" }
            for device in devices {
                _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: device)
            }
            let done = FinishedCount()
            let seen = try await withThrowingTaskGroup(of: [String].self) { group in
                for device in devices {
                    group.addTask {
                        for batch in 0..<10 {
                            let first = Int64(batch * 20 + 1)
                            _ = try await store.push(
                                parameterChanges(device: device, seqs: first...(first + 19)),
                                from: DeviceIdentity(accountID: account, device: device))
                        }
                        done.value.add(1, ordering: .sequentiallyConsistent)
                        return []
                    }
                }
                group.addTask {
                    var cursor: Int64 = 0
                    var bodies: [String] = []
                    while true {
                        let finished = done.value.load(ordering: .sequentiallyConsistent) == devices.count
                        let page = try await store.pull(account: account, after: cursor, limit: 37)
                        bodies += page.bodies
                        cursor = page.cursor
                        if finished && !page.more { return bodies }
                    }
                }
                var all: [String] = []
                for try await part in group { all += part }
                return all
            }
            #expect(seen.count == 8 * 200)
            #expect(Set(seen).count == 8 * 200)
            let count = try await store.logCount(account: account)
            #expect(count == 1600)
            for device in devices {
                let highest = try await store.highestSeq(account: account, device: device)
                #expect(highest == 200)
            }
        }
    }
}

final class FinishedCount: Sendable {
    let value = Atomic<Int>(0)
}

/// Several server instances on one PostgreSQL database. Every wait is for an event, none for a time;
/// a notification that never comes fails the test at its time limit instead of hanging the run.
@Suite(.timeLimit(.minutes(5))) struct PostgresInstancesTests {
    @Test func twoInstancesShareCursorsIdempotenceAndNotifications() async throws {
        let url = try await ThrowawayPostgres.freshDatabase()
        try await DatabaseLocation(url).withStore { first in
            try await DatabaseLocation(url).withStore { second in
                let account = try await first.createAccount(name: "alice")
                _ = try await CredentialIssuance(first).createToken(accountName: "alice", device: "phone")
                let phone = DeviceIdentity(accountID: account, device: "phone")
                // Instance 2 listens; instance 1 accepts a push once LISTEN is in place (`.watching`).
                // A listener that ends finishes the stream, so every wait below ends with it.
                let (events, eventsContinuation) = AsyncStream<StoreEvent>.makeStream()
                let listener = Task {
                    defer { eventsContinuation.finish() }
                    try await second.watchChanges { eventsContinuation.yield($0) }
                }
                defer { listener.cancel() }
                var received = events.makeAsyncIterator()
                while let event = await received.next(), event != .watching {}
                let seq: Int64 = 1
                _ = try await first.push(parameterChanges(device: "phone", seqs: seq...seq), from: phone)
                var heardAccount: Int64?
                while heardAccount == nil, let event = await received.next() {
                    if case .changes(let account) = event { heardAccount = account }
                }
                #expect(heardAccount == account)
                // The same push through both instances at once is stored once.
                let batch = parameterChanges(device: "phone", seqs: (seq + 1)...(seq + 20))
                async let viaFirst = first.push(batch, from: phone)
                async let viaSecond = second.push(batch, from: phone)
                let outcomes = try await [viaFirst, viaSecond]
                #expect(outcomes.map(\.accepted).sorted() == [0, 20])
                let count = try await second.logCount(account: account)
                #expect(count == Int(seq) + 20)
                // Revocations and erasures committed through one instance reach the other, which ends
                // the streams of that device or account.
                _ = try await first.revokeTokens(accountName: "alice", device: "phone", at: 1)
                _ = try await first.eraseAccount(name: "alice", at: 2)
                // So does an uploaded catalog: every instance's devices are told and read its version.
                try await CatalogComposition(first).putCatalogJSON(#"{"tips": []}"#)
                var wanted: [StoreEvent] = [
                    .revoked(account: account, device: "phone"), .erased(account: account), .catalog,
                ]
                while !wanted.isEmpty, let event = await received.next() {
                    wanted.removeAll { $0 == event }
                }
                #expect(wanted.isEmpty)
            }
        }
    }
}

extension StorageContractTests {
    /// A page is bounded by bytes as well as by count (issue 59, item 2): a device that pushed large
    /// changes and pulls at `limit=5000` gets pages of at most ``ChangeTexts/maxPageBytes`` (one
    /// change more never), each with `more` until the end, and every change exactly once — on both
    /// backends, by the one rule ``ChangeTexts/admits(_:limit:)``.
    @Test(arguments: Backend.allCases)
    func pagesAreBoundedByBytesAsWellAsCount(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (account, phone) = try await Self.alicesPhone(in: store)
            let padding = String(repeating: "x", count: 3000)
            let changes = (Int64(1)...600).map { seq in
                Change(
                    device: "phone", seq: seq, hlc: HLC(milliseconds: 1_800_000_000_000 + UInt64(seq), counter: 0),
                    operation: .parameter(id: "p-\(seq)", value: .string(padding)))
            }
            for batch in stride(from: 0, to: changes.count, by: 200) {
                _ = try await store.push(Array(changes[batch..<(batch + 200)]), from: phone)
            }
            var cursor: Int64 = 0
            var seen: [String] = []
            var pages = 0
            while true {
                let page = try await store.pull(account: account, after: cursor, limit: 5000)
                pages += 1
                #expect(page.changes.joined.readableBytes <= ChangeTexts.maxPageBytes)
                #expect(!page.changes.isEmpty || !page.more)
                seen += page.bodies
                cursor = page.cursor
                if !page.more { break }
            }
            #expect(pages >= 4, "600 changes of 3 KB fill more than three 512 KiB pages")
            #expect(seen == changes.map(\.canonicalJSON))
            // A count limit still applies first when it is the smaller.
            let small = try await store.pull(account: account, after: 0, limit: 3)
            #expect(small.changes.count == 3 && small.more)
        }
    }
}
