import TipSyncCore

/// Generates random histories from a seed: operations on every device, syncs in any order, and
/// faults — lost and duplicated messages, partitions, crashes of devices and the server, clock
/// skew up to ±1 day, time passing.
public struct HistoryGenerator: Sendable {
    public var devices: Int
    public var steps: Int

    public init(devices: Int = 3, steps: Int = 40) {
        self.devices = devices
        self.steps = steps
    }

    static let day: Int64 = 86_400_000

    /// Values at the edges of the protocol's number and string model.
    static let exoticValues: [JSONValue] = [
        .string("\u{e9}"), .string("e\u{301}"), .string("\u{1F600}"), .int(9_007_199_254_740_991),
        .int(-9_007_199_254_740_991), .double(0.1), .double(Double.leastNonzeroMagnitude), .null,
        .array([.int(1), .double(2.5)]),
    ]

    public func history(seed: UInt64) -> History {
        var random = SimulationRandom(seed: seed)
        let ids = (0..<devices).map { "d\($0)" }
        // Most devices keep good time; some are far off (up to a day either way).
        let deviceSpecs = ids.map { id -> History.Device in
            let offset: Int64 =
                random.chance(0.25)
                ? Int64.random(in: -Self.day...Self.day, using: &random)
                : Int64.random(in: -2_000...2_000, using: &random)
            return History.Device(id: id, clockOffset: offset)
        }
        let tips = History.defaultCatalog.tips.map(\.id) + ["unlisted"]
        let events = ["opened", "viewed"]
        var steps: [HistoryStep] = []
        for _ in 0..<self.steps {
            let device = ids.randomElement(using: &random)!
            let roll = Int.random(in: 0..<100, using: &random)
            switch roll {
            case 0..<12:
                // Payloads a client in another language may send: non-ASCII and canonically
                // equivalent strings, fractions, the largest exact integers.
                let value: JSONValue? =
                    random.chance(0.5)
                    ? .object([
                        "n": .int(Int64.random(in: 0..<5, using: &random)),
                        "k": Self.exoticValues.randomElement(using: &random)!,
                    ]) : nil
                steps.append(
                    HistoryStep(.donate, device: device, event: events.randomElement(using: &random)!, value: value))
            case 12..<20:
                let (name, value): (String, JSONValue) =
                    random.chance(0.5)
                    ? ("level", random.chance(0.8) ? .int(Int64.random(in: 0..<4, using: &random)) : .double(2.5))
                    : (
                        "plan",
                        random.chance(0.8)
                            ? .string(["free", "pro", "team"].randomElement(using: &random)!)
                            : Self.exoticValues.randomElement(using: &random)!
                    )
                steps.append(HistoryStep(.setParameter, device: device, name: name, value: value))
            case 20..<30:
                steps.append(
                    HistoryStep(
                        .display, device: device, tip: tips.randomElement(using: &random)!,
                        duration: Double(Int.random(in: 0..<8, using: &random))))
            case 30..<37:
                steps.append(
                    HistoryStep(
                        .invalidate, device: device, tip: tips.randomElement(using: &random)!,
                        reason: random.chance(0.5) ? .tipClosed : .actionPerformed))
            case 37..<41:
                steps.append(HistoryStep(.resetEligibility, device: device, tip: tips.randomElement(using: &random)!))
            case 41..<42:
                steps.append(HistoryStep(.resetDatastore, device: device))
            case 42..<44:
                steps.append(
                    HistoryStep(.deleteDonations, device: device, event: events.randomElement(using: &random)!))
            case 44..<54: steps.append(HistoryStep(.push, device: device))
            case 54..<64: steps.append(HistoryStep(.pull, device: device))
            case 64..<70: steps.append(HistoryStep(.sync, device: device))
            case 70..<74: steps.append(HistoryStep(.live))
            case 74..<77: steps.append(HistoryStep(.dropRequest, device: device))
            case 77..<80: steps.append(HistoryStep(.dropResponse, device: device))
            case 80..<83: steps.append(HistoryStep(.duplicate, device: device))
            case 83..<85: steps.append(HistoryStep(.partition, device: device))
            case 85..<88: steps.append(HistoryStep(.heal, device: device))
            case 88..<90: steps.append(HistoryStep(.crashDevice, device: device))
            case 90..<91: steps.append(HistoryStep(.crashServer))
            case 91..<92:
                // One draw, as before backups existed: every other step of a seed stays the same.
                let operations: [HistoryStep.Operation] = [.restartServer, .compact, .backupServer, .restoreServer]
                steps.append(HistoryStep(operations.randomElement(using: &random)!))
            case 92..<98:
                steps.append(HistoryStep(.advance, milliseconds: Int64.random(in: 1...3_600_000, using: &random)))
            default:
                steps.append(
                    HistoryStep(
                        .setClockOffset, device: device,
                        milliseconds: Int64.random(in: -Self.day...Self.day, using: &random)))
            }
        }
        return History(seed: seed, devices: deviceSpecs, steps: steps)
    }
}

extension History {
    /// The same operations delivered in another order: each device's own writes keep their order
    /// (they happen on one device), while syncs, faults and time steps interleave differently.
    public func permutedDelivery(seed: UInt64) -> History {
        var random = SimulationRandom(seed: seed)
        var lanes: [String: [HistoryStep]] = [:]
        var order: [String] = []
        for step in steps {
            let lane = step.isDeviceOperation ? "ops:" + (step.device ?? "") : "other:\(order.count)"
            if lanes[lane] == nil { order.append(lane) }
            lanes[lane, default: []].append(step)
        }
        var result: [HistoryStep] = []
        var remaining = order.map { lanes[$0]! }
        while !remaining.isEmpty {
            let index = Int.random(in: 0..<remaining.count, using: &random)
            result.append(remaining[index].removeFirst())
            if remaining[index].isEmpty { remaining.remove(at: index) }
        }
        var copy = self
        copy.steps = result
        return copy
    }
}
