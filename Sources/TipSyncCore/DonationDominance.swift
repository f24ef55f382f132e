/// Which donations of one event no future change can make visible (protocol.md §4.5): a donation
/// outranked, by (`date`, `id`), by at least `maximum` donations stamped no earlier than it. A
/// deletion or reset that removes any of those (stamp ≤ its stamp) removes it too, so it stays
/// outranked by `maximum` visible donations for ever, whatever arrives later. Which donations this
/// names depends only on the set present, never on the order they came in.
///
/// A replica applies it with its catalog's `maximumCount` (``ReplicaState/trimDonations(of:to:nowMilliseconds:)``);
/// compaction applies it with the ceiling every rule has, ``StatusEvaluator/defaultQueryLimit``
/// (``LogCompaction``, protocol.md §8).
public enum DonationDominance {
    /// Indices of the dominated donations, given their stamps in rank order (lowest rank first).
    /// A collection, so a replica passes a lazy view of its donations' stamps without copying them.
    public static func dominated<Stamps: RandomAccessCollection<Stamp>>(
        stampsInRankOrder stamps: Stamps, keeping maximum: Int
    ) -> Set<Int> where Stamps.Index == Int {
        guard maximum >= 0, stamps.count > maximum else { return [] }
        // Walk from the highest-ranked down, keeping the `maximum` largest stamps seen so far.
        var largest: [Stamp] = []  // ascending; at most `maximum`
        var dominated: Set<Int> = []
        for index in stamps.indices.reversed() {
            let stamp = stamps[index]
            if largest.count == maximum, let smallest = largest.first, smallest >= stamp {
                dominated.insert(index)
            }
            if maximum > 0, largest.count < maximum || largest[0] < stamp {
                if largest.count == maximum { largest.removeFirst() }
                let position = largest.firstIndex { $0 > stamp } ?? largest.count
                largest.insert(stamp, at: position)
            }
        }
        return dominated
    }
}
