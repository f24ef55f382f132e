import Testing

@testable import TipSyncCore

/// An event record's `version` changes with every change to its donations: rule results are cached
/// by it (``StatusEvaluator``), so a change that kept the version would leave a stale answer.
@Suite struct EventRecordVersionTests {
    static func donation(_ id: String, date: Int64, device: String = "x") -> Donation {
        Donation(id: id, date: date, info: nil, stamp: Stamp(hlc: HLC(milliseconds: 1, counter: 0), device: device))
    }

    /// Runs `change` on `record` and expects a new version when the donations changed.
    static func expectNewVersion(
        _ record: inout ReplicaState.EventRecord, _ change: (inout ReplicaState.EventRecord) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let before = (record.version, record.donations)
        change(&record)
        #expect(record.donations != before.1, sourceLocation: sourceLocation)
        #expect(record.version != before.0, sourceLocation: sourceLocation)
    }

    @Test func everyWayOfChangingTheDonationsTakesANewVersion() {
        var record = ReplicaState.EventRecord()
        // Into an empty list, after everything held, interleaved with it.
        Self.expectNewVersion(&record) { _ = $0.insert(contentsOf: [Self.donation("b", date: 2)]) }
        Self.expectNewVersion(&record) { _ = $0.insert(contentsOf: [Self.donation("c", date: 3)]) }
        Self.expectNewVersion(&record) {
            _ = $0.insert(contentsOf: [Self.donation("a", date: 1), Self.donation("d", date: 4)])
        }
        // One at a time: appended and inserted before.
        Self.expectNewVersion(&record) { _ = $0.insert(Self.donation("e", date: 5)) }
        Self.expectNewVersion(&record) { _ = $0.insert(Self.donation("0", date: 0)) }
        Self.expectNewVersion(&record) { $0.removeAll { $0.id == "c" } }
        Self.expectNewVersion(&record) { $0.pruneDominated(keeping: 2) }
        #expect(record.donations.map(\.id) == ["d", "e"])
    }

    @Test func nothingInsertedKeepsTheDonations() {
        var record = ReplicaState.EventRecord()
        _ = record.insert(contentsOf: [Self.donation("a", date: 1)])
        let held = record.donations
        #expect(record.insert(contentsOf: [Self.donation("a", date: 1)]) == [false])
        #expect(record.insert(Self.donation("a", date: 1)) == false)
        #expect(record.donations == held)
    }
}
