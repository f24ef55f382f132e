import Foundation
import TipSync
import TipSyncTestSupport

/// A fresh directory (under the test process's ``Scratch`` root, removed when it exits).
func temporaryDirectory(_ name: String = "replica") -> URL {
    let url = Scratch.path("tipsync-tests").appendingPathComponent(name)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A replica in a new temporary directory on a manual clock.
func makeReplica(
    _ device: String = "device-a", clock: ManualClock = ManualClock(), directory: URL? = nil,
    environment: [String: String] = [:]
) throws -> TipsReplica {
    try TipsReplica(
        directory: directory ?? temporaryDirectory(device), deviceID: device, clock: clock.clock,
        environment: environment)
}

/// Copies every local change of each replica into every other (a perfect sync, for tests).
func exchange(_ replicas: [TipsReplica]) throws {
    let changes = try replicas.map { try $0.localChanges() }
    for replica in replicas {
        try replica.applyRemote(changes.flatMap { $0 })
    }
}

struct YardDonation: Codable, Sendable {
    let yardID: Int
}

/// The tip from the engine issue, verbatim but for `Text`.
struct FavoriteTip: Tip {
    var id: String { "favorite" }
    var title: String { "Save as a Favorite" }
    var message: String? { "Your favorites always appear at the top." }
    var image: String? { "star" }
    var actions: [Action] { Action(id: "learn-more", title: "Learn More") }

    @Parameter static var isLoggedIn: Bool = false
    @Parameter(.transient) static var inTrial: Bool = false
    static let openedDetail = Event(id: "opened-detail")
    static let viewedYard = Event<YardDonation>(id: "viewed-yard")

    var rules: [Rule] {
        #Rule(Self.$isLoggedIn) { $0 == true }
        #Rule(Self.openedDetail) { $0.donations.donatedWithin(.days(5)).count >= 3 }
        #Rule(Self.viewedYard) { $0.donations.filter { $0.yardID == 7 }.count >= 2 }
    }
    var options: [Option] {
        Tips.MaxDisplayCount(3)
        Tips.IgnoresDisplayFrequency(true)
    }
}
