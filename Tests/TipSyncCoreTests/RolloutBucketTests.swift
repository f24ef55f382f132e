import Testing
import TipSyncCore

/// The rollout bucket (protocol.md §13.8): its values are pinned by `conformance/catalog/buckets.json`
/// in every client; these check what a rollout needs of them.
@Suite struct RolloutBucketTests {
    /// 10,000 generated accounts, a 10% rollout: 10% ± 1% of them are in, for several keys.
    @Test(arguments: ["rollout-10", "welcome", "exp:search-tip", "é"])
    func aTenPercentRolloutTakesTenPercentOfAccounts(_ key: String) {
        let accounts = (0..<10_000).map { "account-\($0)" }
        let inside = accounts.filter { RolloutBucket.bucket(account: $0, key: key) < 1000 }.count
        #expect((900...1100).contains(inside), "\(inside) of 10,000 accounts in a 10% rollout of '\(key)'")
    }

    /// Raising a rollout only adds accounts (someone in at 10% is in at 20%); another key draws
    /// another 10%, largely different.
    @Test func raisingTheThresholdKeepsEveryoneInAndAnotherKeyReshuffles() {
        let accounts = (0..<10_000).map { "user\($0)@example.com" }
        let at10 = Set(accounts.filter { RolloutBucket.bucket(account: $0, key: "search") < 1000 })
        let at20 = Set(accounts.filter { RolloutBucket.bucket(account: $0, key: "search") < 2000 })
        let other = Set(accounts.filter { RolloutBucket.bucket(account: $0, key: "favorites") < 1000 })
        #expect(at10.isSubset(of: at20))
        #expect((1800...2200).contains(at20.count))
        // Independent draws share about 1% of accounts; the same draw would share 10%.
        #expect(at10.intersection(other).count < 300)
    }

    @Test func everyBucketIsInRange() {
        for index in 0..<2000 {
            #expect((0..<RolloutBucket.count).contains(RolloutBucket.bucket(account: "a\(index)", key: "k")))
        }
        #expect((0..<RolloutBucket.count).contains(RolloutBucket.bucket(account: "", key: "")))
    }
}
