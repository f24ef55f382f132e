package import TipSyncCore
package import TipSyncServerBasics

/// How a push continues a device's log, written once for every backend (protocol.md §7): changes at
/// or below the device's highest stored `seq` are duplicates, ignored (a retried push is a no-op);
/// the rest must continue that number without a gap, or the whole batch is refused with
/// `409 sequence_gap` and the number the server wants next. Backends read the device's highest
/// stored `seq` under its lock, plan, and store exactly ``fresh``.
package struct PushPlan {
    /// The changes to store, in order: `highestStored + 1`, `+ 2`, …
    package let fresh: [Change]
    /// Where each of ``fresh`` is in the batch (to pair it with what the caller prepared per change).
    package let freshIndices: [Int]
    /// Changes the device's log already holds.
    package let duplicates: Int
    /// The device's highest stored `seq` once ``fresh`` is stored.
    package let highestSeq: Int64

    /// - Throws: ``SyncError`` `sequence_gap` when the batch does not continue the device's log.
    package init(_ changes: [Change], highestStored: Int64) throws(SyncError) {
        freshIndices = changes.indices.filter { changes[$0].seq > highestStored }
        fresh = freshIndices.map { changes[$0] }
        var expected = highestStored &+ 1
        for change in fresh {
            guard change.seq == expected else { throw SyncError.sequenceGap(expected: expected, got: change.seq) }
            expected &+= 1
        }
        duplicates = changes.count - fresh.count
        highestSeq = fresh.last?.seq ?? highestStored
    }
}
