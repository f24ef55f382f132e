import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// The rules both backends apply, written once above them (issue 32, item 1): each backend's I/O
/// is checked by `StorageContractTests`; the decisions themselves here.
@Suite struct StoragePolicyTests {
    static func batch(_ seqs: [Int64]) -> [Change] {
        seqs.map { change("phone", $0, .datastoreReset, ms: 1_700_000_000_000) }
    }

    @Test func aPushStoresWhatContinuesTheLogAndIgnoresWhatItHolds() throws {
        let plan = try PushPlan(Self.batch([3, 4, 5, 6]), highestStored: 4)
        #expect(plan.fresh.map(\.seq) == [5, 6] && plan.freshIndices == [2, 3])
        #expect(plan.duplicates == 2 && plan.highestSeq == 6)
        let retried = try PushPlan(Self.batch([1, 2]), highestStored: 4)
        #expect(retried.fresh.isEmpty && retried.duplicates == 2 && retried.highestSeq == 4)
        let first = try PushPlan(Self.batch([1]), highestStored: 0)
        #expect(first.fresh.map(\.seq) == [1] && first.highestSeq == 1)
    }

    @Test(arguments: [([Int64(6), 7], Int64(4), Int64(5)), ([4, 5, 7], 3, 6), ([2], 0, 1)])
    func aPushWithAGapIsRefusedWithTheNumberToResumeFrom(_ seqs: [Int64], _ stored: Int64, _ expected: Int64) {
        #expect {
            try PushPlan(Self.batch(seqs), highestStored: stored)
        } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.code == .sequenceGap && error.expectedSeq == expected
        }
    }

    @Test func signInRefusesCredentialsIssuedAtOrBeforeAnErasureOrARevocation() {
        let phone = DeviceIdentity(accountID: 7, device: "phone")
        #expect(SignInResult.decide(identity: phone, revokedAt: nil, erasedAt: nil, issuedAt: 5) == .identity(phone))
        #expect(SignInResult.decide(identity: phone, revokedAt: 5, erasedAt: nil, issuedAt: 5) == .revoked)
        #expect(SignInResult.decide(identity: phone, revokedAt: 5, erasedAt: nil, issuedAt: 6) == .identity(phone))
        #expect(SignInResult.decide(identity: phone, revokedAt: 5, erasedAt: nil, issuedAt: nil) == .revoked)
        // Erasure wins, also over an account recreated under the same name since.
        #expect(SignInResult.decide(identity: phone, revokedAt: nil, erasedAt: 9, issuedAt: 9) == .erased)
        #expect(SignInResult.decide(identity: nil, revokedAt: nil, erasedAt: 9, issuedAt: 3) == .erased)
        #expect(SignInResult.decide(identity: nil, revokedAt: nil, erasedAt: 9, issuedAt: 10) == nil)
    }

    @Test func aPageIsASnapshotOnlyAfterACursorThatCompactionPassed() {
        #expect(!PullPage.isSnapshot(cursor: 0, compactedThrough: 50))
        #expect(PullPage.isSnapshot(cursor: 10, compactedThrough: 50))
        #expect(!PullPage.isSnapshot(cursor: 50, compactedThrough: 50))
        #expect(!PullPage.isSnapshot(cursor: 60, compactedThrough: 50))
    }
}
