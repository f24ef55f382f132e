import Testing
import TipSyncCore
import TipSyncTestSupport

@Suite struct LogCompactionTests {
    @Test(arguments: 0..<150) func compactedLogGivesTheSameState(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let changes = simulate(seed: seed, devices: 3, steps: 80).flatMap(\.log).shuffled(using: &rng)
        let entries = changes.enumerated().map {
            LogCompaction.Entry(position: Int64($0.offset + 1), change: $0.element)
        }
        let dropped = LogCompaction.superseded(entries)
        var full = ReplicaState()
        for change in changes { full.apply(change) }
        var compacted = ReplicaState()
        for entry in entries where !dropped.contains(entry.position) { compacted.apply(entry.change) }
        #expect(compacted == full)

        // A replica that saw a prefix of the full log, then only the kept entries after it, agrees too.
        let cut = Int.random(in: 0...entries.count, using: &rng)
        var resumed = ReplicaState()
        for entry in entries[..<cut] { resumed.apply(entry.change) }
        for entry in entries[cut...] where !dropped.contains(entry.position) { resumed.apply(entry.change) }
        #expect(resumed == full)
    }

    @Test func supersededParameterWritesAreDropped() {
        let hlc = { (ms: UInt64) in HLC(milliseconds: ms, counter: 0) }
        let entries = [
            LogCompaction.Entry(
                position: 1,
                change: Change(device: "a", seq: 1, hlc: hlc(5), operation: .parameter(id: "p", value: .int(1)))),
            LogCompaction.Entry(
                position: 2,
                change: Change(device: "b", seq: 1, hlc: hlc(9), operation: .parameter(id: "p", value: .int(2)))),
            LogCompaction.Entry(
                position: 3,
                change: Change(device: "a", seq: 2, hlc: hlc(7), operation: .parameter(id: "p", value: .int(3)))),
        ]
        #expect(LogCompaction.superseded(entries) == [1, 3])
    }
}
