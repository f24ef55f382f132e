import Foundation
import Testing
import TipSyncCore
import TipSyncServer
import TipSyncServerTestSupport

/// The administration half of the storage contract (accounts, erasure, revocation, sign-in, admin
/// keys), run against SQLite and a real PostgreSQL.
@Suite struct AdministrationContractTests {
    @Test(arguments: Backend.allCases)
    func accountsAreCreatedOnceListedByBytesAndPaged(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let first = try await store.ensureAccount(name: "bob", at: 1000)
            let again = try await store.ensureAccount(name: "bob", at: 2000)
            #expect(first.created && !again.created && first.id == again.id)
            // Byte order of UTF-8: "Zed" < "alice" < "bob" < "émile"; NFC and NFD café are two accounts.
            for name in ["alice", "Zed", "émile", "caf\u{E9}", "cafe\u{301}"] {
                _ = try await store.ensureAccount(name: name, at: 1000)
            }
            let all = try await store.accounts(after: nil, limit: 100).map(\.name)
            #expect(all == ["Zed", "alice", "bob", "cafe\u{301}", "caf\u{E9}", "émile"])
            let page = try await store.accounts(after: "alice", limit: 2).map(\.name)
            #expect(page == ["bob", "cafe\u{301}"])
            let bob = try #require(try await store.accounts(after: "alice", limit: 1).first)
            #expect(bob.createdAt == 1000 && bob.devices == 0 && bob.logEntries == 0)
        }
    }

    /// What a starting server remembers (``TokenIdentityWarmup``): the newest tokens first, revoked
    /// ones gone, at most `limit`.
    @Test(arguments: Backend.allCases)
    func theNewestTokensComeFirstAndRevokedOnesNotAtAll(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let alice = try await store.createAccount(name: "alice")
            let bob = try await store.createAccount(name: "bob")
            #expect(try await store.insertToken(hash: "h-phone", accountName: "alice", device: "phone", at: 1000))
            #expect(try await store.insertToken(hash: "h-laptop", accountName: "alice", device: "laptop", at: 2000))
            #expect(try await store.insertToken(hash: "h-bob", accountName: "bob", device: "tablet", at: 3000))
            #expect(try await store.insertToken(hash: "h-watch", accountName: "alice", device: "watch", at: 4000))
            _ = try await store.revokeTokens(accountName: "alice", device: "watch", at: 5000)
            #expect(
                try await store.newestTokens(limit: 10) == [
                    UnconfirmedToken(hash: "h-bob", identity: DeviceIdentity(accountID: bob, device: "tablet")),
                    UnconfirmedToken(hash: "h-laptop", identity: DeviceIdentity(accountID: alice, device: "laptop")),
                    UnconfirmedToken(hash: "h-phone", identity: DeviceIdentity(accountID: alice, device: "phone")),
                ])
            #expect(try await store.newestTokens(limit: 1).map(\.hash) == ["h-bob"])
        }
    }

    @Test(arguments: Backend.allCases)
    func detailsShowDevicesTheirTokensSeqAndLastSeen(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let account = try await store.createAccount(name: "alice")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "laptop")
            let outcome = try await store.push(
                parameterChanges(device: "phone", seqs: 1...4),
                from: DeviceIdentity(accountID: account, device: "phone"))
            #expect(outcome.entriesSinceCompaction == 4)
            try await store.recordSeen([DeviceIdentity(accountID: account, device: "phone"): 5000])
            try await store.recordSeen([DeviceIdentity(accountID: account, device: "phone"): 4000])  // older: ignored
            try await store.recordPulled([DeviceIdentity(accountID: account, device: "phone"): 4])
            try await store.recordPulled([DeviceIdentity(accountID: account, device: "phone"): 2])  // latest wins
            let details = try #require(try await store.accountDetails(name: "alice"))
            #expect(details.logEntries == 4 && details.logEnd == 4 && details.entriesSinceCompaction == 4)
            #expect(details.lastCompactionAt == nil)
            #expect(
                details.devices == [
                    DeviceDetails(name: "laptop", highestSeq: 0, lastSeen: nil, tokens: 1, revokedAt: nil),
                    DeviceDetails(
                        name: "phone", highestSeq: 4, lastSeen: 5000, tokens: 2, revokedAt: nil, pulledThrough: 2),
                ])
            _ = try await LogCompactor(store: store).compact(account: account)
            let compacted = try #require(try await store.accountDetails(name: "alice"))
            #expect(compacted.lastCompactionAt != nil && compacted.entriesSinceCompaction == 0)
            let missing = try await store.accountDetails(name: "nobody")
            #expect(missing == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func revokingADeviceDeletesEveryTokenAndRefusesOlderJWTs(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let account = try await store.createAccount(name: "alice")
            let first = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            let second = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            let laptop = try await CredentialIssuance(store).createToken(accountName: "alice", device: "laptop")
            let revoked = try await store.revokeTokens(accountName: "alice", device: "phone", at: 10_000)
            #expect(revoked?.account == account && revoked?.tokens == 2)
            for token in [first, second] {
                let identity = try await store.identity(forTokenHash: TokenHasher.hash(token))
                #expect(identity == nil)
            }
            let other = try await store.identity(forTokenHash: TokenHasher.hash(laptop))
            #expect(other == DeviceIdentity(accountID: account, device: "laptop"))
            let older = try await store.signIn(accountName: "alice", device: "phone", issuedAt: 9_999, at: 11_000)
            #expect(older == .revoked)
            let noIssuedAt = try await store.signIn(accountName: "alice", device: "phone", issuedAt: nil, at: 11_000)
            #expect(noIssuedAt == .revoked)
            let newer = try await store.signIn(accountName: "alice", device: "phone", issuedAt: 10_001, at: 11_000)
            #expect(newer == .identity(DeviceIdentity(accountID: account, device: "phone")))
            // A new token for the device works again.
            let fresh = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            let identity = try await store.identity(forTokenHash: TokenHasher.hash(fresh))
            #expect(identity != nil)
            let unknown = try await store.revokeTokens(accountName: "alice", device: "tablet", at: 10_000)
            #expect(unknown == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func erasureRemovesEverythingOfTheAccountAndOnlyThat(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let alice = try await store.createAccount(name: "alice")
            let bob = try await store.createAccount(name: "bob")
            let token = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            let bobToken = try await CredentialIssuance(store).createToken(accountName: "bob", device: "phone")
            _ = try await store.push(
                parameterChanges(device: "phone", seqs: 1...5), from: DeviceIdentity(accountID: alice, device: "phone"))
            _ = try await store.push(
                parameterChanges(device: "phone", seqs: 1...3), from: DeviceIdentity(accountID: bob, device: "phone"))
            let erased = try await store.eraseAccount(name: "alice", at: 50_000)
            #expect(erased?.id == alice && erased?.logEntries == 5)
            let identity = try await store.identity(forTokenHash: TokenHasher.hash(token))
            #expect(identity == nil)
            let aliceLog = try await store.logCount(account: alice)
            #expect(aliceLog == 0)
            let gone = try await store.accountID(named: "alice")
            #expect(gone == nil)
            let bobLog = try await store.logCount(account: bob)
            let bobIdentity = try await store.identity(forTokenHash: TokenHasher.hash(bobToken))
            #expect(bobLog == 3 && bobIdentity != nil)
            // A JWT issued before the erasure does not bring the account back; one issued after does.
            let stale = try await store.signIn(accountName: "alice", device: "phone", issuedAt: 49_000, at: 60_000)
            #expect(stale == .erased)
            let stillGone = try await store.accountID(named: "alice")
            #expect(stillGone == nil)
            guard
                case .identity(let fresh) = try await store.signIn(
                    accountName: "alice", device: "phone", issuedAt: 50_001, at: 60_000)
            else {
                Issue.record("a JWT issued after the erasure signs in")
                return
            }
            #expect(fresh.accountID != alice)
            let again = try await store.eraseAccount(name: "nobody", at: 1)
            #expect(again == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func signInCreatesTheAccountAndDeviceOnFirstUse(_ backend: Backend) async throws {
        try await backend.withStore { store in
            guard
                case .identity(let identity) = try await store.signIn(
                    accountName: "user-42", device: "phone", issuedAt: 1, at: 1000)
            else {
                Issue.record("first sign-in creates the account")
                return
            }
            let id = try await store.accountID(named: "user-42")
            #expect(identity.accountID == id)
            let highest = try await store.highestSeq(account: identity.accountID, device: "phone")
            #expect(highest == 0)
            let second = try await store.signIn(accountName: "user-42", device: "phone", issuedAt: 2, at: 2000)
            #expect(second == .identity(identity))
        }
    }

    @Test(arguments: Backend.allCases)
    func adminKeysAreStoredAsHashesListedAndRevoked(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (name, key) = try await CredentialIssuance(store).createAdminKey(name: "backend", at: 7)
            #expect(name == "backend" && key.hasPrefix("tsa_") && key.count == 47)
            await #expect(throws: StoreError.self) {
                try await CredentialIssuance(store).createAdminKey(name: "backend", at: 8)
            }
            let (defaultName, other) = try await CredentialIssuance(store).createAdminKey(name: nil, at: 9)
            #expect(defaultName == String(other.prefix(12)))
            let found = try await store.adminKeyName(forHash: TokenHasher.hash(key))
            #expect(found == "backend")
            let keys = try await store.adminKeys()
            #expect(keys.contains(AdminKeyRecord(name: "backend", createdAt: 7)) && keys.count == 2)
            #expect(try await store.revokeAdminKey(name: "backend"))
            #expect(try await !store.revokeAdminKey(name: "backend"))
            let afterRevoke = try await store.adminKeyName(forHash: TokenHasher.hash(key))
            #expect(afterRevoke == nil)
        }
    }
}
