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

    /// Each way ``ReplicaState/EventRecord/insert(contentsOf:)`` takes — into an empty list, after
    /// everything held, interleaved with it, with ids already held or repeated in the batch — gives
    /// the list and the answers of inserting one by one.
    @Test(arguments: 0..<100) func aBatchOfDonationsInsertsAsOneByOne(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        func donations(_ count: Int, dates: ClosedRange<Int64>) -> [Donation] {
            (0..<count).map { _ in
                let id = "d\(Int.random(in: 0..<60, using: &random))"
                return Donation(
                    id: id, date: Int64.random(in: dates, using: &random),
                    info: .object(["n": .int(1), "a": .bool(true)]),
                    stamp: Stamp(hlc: HLC(milliseconds: 1, counter: 0), device: "x"))
            }
        }
        let held = donations(Int.random(in: 0...20, using: &random), dates: 0...50)
        let lower: Int64 = seed % 2 == 0 ? 51 : 0  // even seeds: a batch dated after everything held
        let batch = donations(Int.random(in: 0...30, using: &random), dates: lower...100)
        var oneByOne = ReplicaState.EventRecord()
        for donation in held { _ = oneByOne.insert(donation) }
        var batched = oneByOne
        let expected = batch.map { oneByOne.insert($0) }
        #expect(batched.insert(contentsOf: batch) == expected)
        #expect(batched == oneByOne)
        #expect(batched.ids == oneByOne.ids)
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
