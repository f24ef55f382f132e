import Foundation
import Testing
import TipSyncTestSupport

@testable import TipSync

/// However remote changes arrive (one at a time, in pages of any size, in any order, duplicated),
/// what the replica writes to SQLite reloads as exactly the state it holds in memory.
@Suite struct RemoteBatchPersistenceTests {
    /// Three devices making random changes of every kind, including ones that overwrite each other
    /// within a page (the same parameter, tip or display counter), deletions and a datastore reset.
    static func history(seed: UInt64) throws -> [Change] {
        var random = SeededGenerator(seed: seed)
        let clock = ManualClock()
        let writers = try ["w0", "w1", "w2"].map { try makeReplica($0, clock: clock) }
        for step in 0..<400 {
            let writer = writers[Int(random.next() % 3)]
            if step == 200 {
                try writer.resetDatastore()
                continue
            }
            let tip = "t\(random.next() % 3)"
            let event = "e\(random.next() % 2)"
            switch random.next() % 20 {
            case 0..<7: try writer.donate(event: event, info: .object(["n": .int(Int64(step))]))
            case 7: try writer.donate(event: event, infos: (0..<3).map { .int(Int64($0)) })
            case 8..<11: try writer.setParameter("p\(random.next() % 4)", to: .int(Int64(random.next() % 5)))
            case 11..<13: try writer.recordDisplay(tip: tip, duration: Double(random.next() % 4))
            case 13..<15: try writer.invalidate(tip: tip, reason: .tipClosed)
            case 15..<17: try writer.resetEligibility(tip: tip)
            default: try writer.deleteDonations(event: event)
            }
            clock.advance(by: Double(random.next() % 3))
        }
        return try writers.flatMap { try $0.localChanges() }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func pagesOfAnySizeReloadAsTheStateInMemory(_ seed: UInt64) throws {
        var random = SeededGenerator(seed: seed &* 7919)
        let changes = try Self.history(seed: seed)
        var states: [ReplicaState] = []
        for delivery in 0..<3 {
            let directory = temporaryDirectory()
            let reader = try makeReplica("reader", directory: directory)
            // One event keeps only its 5 newest donations: trimming happens inside pages too.
            reader.register(event: EventDefinition(id: "e1", donationLimit: DonationLimit(maximumCount: 5)))
            var remaining = delivery == 0 ? changes : changes.shuffled(using: &random)
            while !remaining.isEmpty {
                let size = delivery == 2 ? remaining.count : Int(random.next() % 60) + 1
                try reader.applyRemote(Array(remaining.prefix(size)))
                remaining.removeFirst(min(size, remaining.count))
            }
            try reader.applyRemote(Array(changes.prefix(50)))  // duplicates change nothing
            let reopened = try makeReplica("reader", directory: directory)
            #expect(reopened.state == reader.state, "delivery \(delivery)")
            states.append(reader.state)
        }
        #expect(states.allSatisfy { $0 == states[0] })
    }

    /// A page's donation rows are bound from one buffer of their texts: every shape of text — short
    /// and long, non-ASCII, an empty string, an absent payload, payloads of one member and of several
    /// (written in canonical order) — in full statements and a last short one, reloads exactly.
    @Test func donationTextsOfEveryShapeReloadExactly() throws {
        let events = ["e", "événement", String(repeating: "long-event-name-", count: 8)]
        let devices = ["d", "appareil-🎉", String(repeating: "x", count: 40)]
        let infos: [JSONValue?] = [
            nil, .string(""), .object(["ключ": .string("значение 🎉")]), .int(7),
            .array([.string(String(repeating: "y", count: 300)), .bool(true)]),
            .object(["b": .int(1), "a": .object(["z": .null, "y": .double(1.5)]), "ä": .string("\u{1}\"")]),
        ]
        let changes = (1...257).map { n -> Change in
            let device = devices[n % devices.count]
            return Change(
                device: device, seq: Int64(n), hlc: HLC(milliseconds: 1_700_000_000_000 + UInt64(n), counter: 0),
                operation: .donation(
                    event: events[n % events.count], id: n % 4 == 0 ? "\(device):ü\(n)" : "\(device):\(n)",
                    date: Int64(n), info: infos[n % infos.count]))
        }
        let directory = temporaryDirectory()
        let reader = try makeReplica("reader", directory: directory)
        try reader.applyRemote(changes)
        #expect(reader.state.events.values.reduce(0) { $0 + $1.donations.count } == changes.count)
        let reopened = try makeReplica("reader", directory: directory)
        #expect(reopened.state == reader.state)
    }
}
