import ArgumentParser
import Foundation
import TipSync

/// The Swift device of `idle-devices`: what an app does, and nothing more — `Tips.configure` with
/// sync (`TIPSYNC_SERVER`, `TIPSYNC_TOKEN`, `TIPSYNC_DEVICE`; its store under `XDG_DATA_HOME`), then
/// a tip's `statusUpdates` for as long as it runs. (The README's walkthrough used to be this program;
/// it exits once its tip is closed now, as the README says.)
struct IdleApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle-app", abstract: "A Swift app at rest with sync running (for idle-devices).",
        shouldDisplay: false)

    struct Welcome: Tip {
        var id: String { "welcome" }
        var title: String { "Welcome to Yards" }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let server = environment["TIPSYNC_SERVER"].flatMap(URL.init(string:)),
            let token = environment["TIPSYNC_TOKEN"]
        else { throw ValidationError("set TIPSYNC_SERVER and TIPSYNC_TOKEN") }
        try Tips.configure([
            .datastoreLocation(.applicationDefault), .deviceID(environment["TIPSYNC_DEVICE"] ?? "program"),
            .sync(server: server, token: token),
        ])
        for await _ in Welcome().statusUpdates {}
    }
}
