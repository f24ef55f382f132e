import Testing
import TipSyncTestSupport

@testable import TipSyncCore

/// Merging a page at once (``ReplicaState/apply(_:donationLimits:)`` over an array) is merging its
/// changes one by one: the same state and the same answer for every change.
@Suite struct BatchMergeTests {
    /// Random protocol-valid changes (every kind, resets, deletions, count- and age-limited events),
    /// delivered in a random order with duplicates, in random page sizes, over a state that already
    /// merged some of them.
    @Test(arguments: 0..<200) func aBatchMergesAsItsChangesOneByOne(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var changes = ProtocolValidChangeTests.changeSet(seed: seed)
        for _ in 0..<Int.random(in: 0...10, using: &random) { changes.append(changes.randomElement(using: &random)!) }
        changes.shuffle(using: &random)
        let limits = ProtocolValidChangeTests.catalog.donationLimits
        let already = changes.prefix(Int.random(in: 0...changes.count / 2, using: &random))
        var oneByOne = ReplicaState()
        for change in already { oneByOne.apply(change, donationLimits: limits) }
        var batched = oneByOne
        var rest = changes[...]
        while !rest.isEmpty {
            let page = Array(rest.prefix(Int.random(in: 1...12, using: &random)))
            rest = rest.dropFirst(page.count)
            let expected = page.map { oneByOne.apply($0, donationLimits: limits) }
            #expect(batched.apply(page, donationLimits: limits) == expected)
            #expect(batched == oneByOne)
        }
        for (event, record) in batched.events {
            #expect(record.ids == Set(record.donations.map(\.id)), "\(event)")
            #expect(zip(record.donations, record.donations.dropFirst()).allSatisfy { Donation.precedes($0, $1) })
        }
    }

    /// Ids compare by code point: `é` (U+00E9) after `e` + U+0301, whatever Swift's string order says.
    @Test func donationIdsCompareByTheirBytes() {
        let ids = ["b", "a", "é", "e\u{301}", "", "ab", "a\u{0}", "\u{1F600}", "z", "Zoë"]
        for lhs in ids {
            for rhs in ids {
                #expect(
                    Donation.bytesPrecede(lhs, rhs) == lhs.utf8.lexicographicallyPrecedes(rhs.utf8), "\(lhs) \(rhs)")
            }
        }
    }
}
