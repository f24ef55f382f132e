import Foundation
import TipSync

struct YardDonation: Codable, Sendable { let yardID: Int }

struct FavoriteTip: Tip {
    var id: String { "favorite" }                     // optional: defaults to the type's name
    var title: String { "Save as a Favorite" }
    var message: String? { "Your favorites always appear at the top." }
    var image: String? { "star" }
    var actions: [Action] { Action(id: "learn-more", title: "Learn More") }

    @Parameter(id: "isLoggedIn") static var isLoggedIn: Bool = false           // persisted and synced
    @Parameter(id: "inTrial", .transient) static var inTrial: Bool = false     // reset at each launch
    static let openedDetail = Event(id: "opened-detail")
    static let viewedYard = Event<YardDonation>(id: "viewed-yard")

    var rules: [Rule] {                                       // all must hold
        #Rule(Self.$isLoggedIn) { $0 == true }
        #Rule(Self.openedDetail) { $0.donations.donatedWithin(.days(5)).count >= 3 }
        #Rule(Self.viewedYard) { $0.donations.filter { $0.yardID == 7 }.count >= 2 }
    }
    var options: [Option] {
        Tips.MaxDisplayCount(3)
        Tips.IgnoresDisplayFrequency(true)
    }
}

@main struct App {
    static func main() async throws {
        var options: [Tips.ConfigurationOption] = [.displayFrequency(.daily), .datastoreLocation(.applicationDefault)]
        let environment = ProcessInfo.processInfo.environment     // sync: see "Sync across devices"
        if let server = environment["TIPSYNC_SERVER"].flatMap(URL.init(string:)), let token = environment["TIPSYNC_TOKEN"] {
            options += [.deviceID(environment["TIPSYNC_DEVICE"] ?? "phone"), .sync(server: server, token: token)]
        }
        try Tips.configure(options)

        await FavoriteTip.openedDetail.donate()
        await FavoriteTip.viewedYard.donate(YardDonation(yardID: 7))
        FavoriteTip.isLoggedIn = true

        let tip = FavoriteTip()
        if tip.shouldDisplay {
            print(tip.content.title)              // the server catalog's text when the app follows it
            tip.recordDisplay(duration: 4)        // what TipKit's own views do while a tip is on screen
        }
        tip.invalidate(reason: .tipClosed)        // permanent, on every device, until resetEligibility()

        for await status in tip.statusUpdates {   // emits on every change: local, from other devices, or time passing
            print(status)                         // pending, available, invalidated(tipClosed)
            if case .invalidated = status { break }
        }
        try? await Tips.syncNow()                 // with sync: pushed before quitting (else at the next launch)
    }
}
