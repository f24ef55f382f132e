import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 72, item 2: an operator finds the devices that stopped syncing — a device refused by the
/// server is never seen, so it is listed once it has been quiet for the hours asked.
@Suite struct QuietDevicesTests {
    @Test(arguments: Backend.allCases)
    func devicesNotSeenSinceATimeAreListedLongestQuietFirst(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let alice = try await store.createAccount(name: "alice")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "laptop")
            let bob = try await store.createAccount(name: "bob")
            _ = try await CredentialIssuance(store).createToken(accountName: "bob", device: "tablet")
            try await store.recordSeen([
                DeviceIdentity(accountID: alice, device: "phone"): 1_000,
                DeviceIdentity(accountID: alice, device: "laptop"): 9_000,
                DeviceIdentity(accountID: bob, device: "tablet"): 5_000,
            ])
            let quiet = try await store.quietDevices(seenBefore: 6_000, limit: 10)
            #expect(
                quiet == [
                    QuietDevice(account: "alice", device: "phone", lastSeen: 1_000),
                    QuietDevice(account: "bob", device: "tablet", lastSeen: 5_000),
                ])
            _ = try await CredentialIssuance(store).createToken(accountName: "bob", device: "never")
            #expect(
                try await store.quietDevices(seenBefore: 6_000, limit: 1) == [
                    QuietDevice(account: "bob", device: "never", lastSeen: nil)
                ])
        }
    }

    @Test func theConsoleOverviewListsDevicesQuietForTheHoursAsked() async throws {
        let console = try await ConsoleTests.Console.make()
        try await console.app().test(.router) { client in
            let (cookie, _) = try await ConsoleTests.login(client, key: console.key)
            try await client.execute(uri: "/v1/pull", method: .get, headers: console.fixture.headers("phone")) {
                #expect($0.status == .ok)
            }
            let page = try await ConsoleTests.get(client, "/console?quiet=2", cookie: cookie)
            #expect(page.contains("Devices not seen for 2 hours"))
            // The laptop never synced; the phone did just now (once its sighting is written).
            #expect(page.contains("<td class=\"wrap\">laptop</td><td>never</td>"), "\(page)")
        }
    }
}
