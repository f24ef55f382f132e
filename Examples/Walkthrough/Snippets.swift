import Foundation
import TipSync

// The README's shorter Swift blocks, each verbatim inside a function, so the suite compiles them
// (`ReadmeExampleTests` checks every block against the file its marker names). They are compiled,
// not run: `App.swift` is the program that runs.

/// "Sync across devices": each device's configuration.
func configureThePhone() throws {
    try Tips.configure([
        .datastoreLocation(.applicationDefault),
        .deviceID("phone"),
        .sync(server: URL(string: "http://127.0.0.1:8080")!, token: "ts_…"),
    ])
}

/// "When the app is suspended or quits".
func sceneDidEnterBackground() async {
    do {
        try await Tips.syncNow()                  // on the server: every other device will see it
    } catch {
        print("still in the outbox, pushed at the next launch: \(error)")
    }
}

/// "A new device: the first sync".
func firstLaunch() async throws {
    if try await Tips.waitForFirstSync(timeout: .seconds(3)) == false {
        print("offline: tips show once the bounded wait has passed")
    }
    if let status = await Tips.syncStatus, let error = status.lastError {
        print("\(status.state): \(error)")             // refused: sync token refused… (retrying)
    }
    guard let client = Tips.syncClient else { return }
    for await status in await client.statusUpdates() {   // every change, as it happens
        print(status.state, status.nextAttemptAt as Any, status.hasSynced, status.pendingChanges)
    }
}

/// Stands for an app's own backend in the JWT example.
struct MyBackend {
    func freshTipSyncJWT() async throws -> String { "eyJ…" }
}

/// "Sign-in from your app's identity provider".
func jwtConfiguration(url: URL, myBackend: MyBackend) -> SyncConfiguration {
    let configuration = SyncConfiguration(server: url) { try await myBackend.freshTipSyncJWT() }
    return configuration
}

/// "Many replicas in one process".
func manyReplicas(phoneDir: URL, laptopDir: URL) throws {
    let clock = ManualClock()                                   // tests never sleep: move time by hand
    let phone = try TipsReplica(directory: phoneDir, deviceID: "phone", clock: clock.clock)
    let laptop = try TipsReplica(directory: laptopDir, deviceID: "laptop", clock: clock.clock)
    try FavoriteTip().invalidate(reason: .tipClosed, in: phone)
    try laptop.applyRemote(try phone.localChanges())            // what sync does
    print(FavoriteTip().status(in: laptop))                     // .invalidated(.tipClosed)
}
