import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 73, item 4: the console's account page said "available — nothing holds it back" for tips
/// that held on one of the account's devices, and knew nothing of a tip for other platforms. Each
/// device reports its platform, app version and locale (`TipSync-Context`, protocol.md §5); the page
/// gives each reporting device's status with its own platform's catalog and context.
@Suite struct ConsolePerDeviceStatusTests {
    static let catalog = #"""
        {"tips": [
          {"id": "search", "title": "Search", "platforms": ["web", "linux"]},
          {"id": "beta", "title": "Beta",
           "targeting": [{">=": [{"compareVersions": [{"context": "appVersion"}, "2.0"]}, 0]}]}
        ]}
        """#

    @Test func eachReportingDeviceHasItsOwnStatusLine() async throws {
        let console = try await ConsoleTests.Console.make()
        _ = try await CatalogComposition(console.fixture.store).putCatalogJSON(Self.catalog, uploadedBy: "test")
        try await console.app().test(.router) { client in
            // The phone (iOS, 1.0) and the laptop (web, 2.1) pull, reporting themselves as clients do.
            for (device, context) in [
                ("phone", DeviceContext(platform: "ios", appVersion: "1.0", locale: "en-US")),
                ("laptop", DeviceContext(platform: "web", appVersion: "2.1", locale: "fr-FR")),
            ] {
                var headers = console.fixture.headers(device)
                headers[HTTPField.Name(DeviceContext.headerName)!] = context.headerValue
                try await client.execute(uri: "/v1/pull", method: .get, headers: headers) {
                    #expect($0.status == .ok)
                }
            }
            let (cookie, _) = try await ConsoleTests.login(client, key: console.key)
            let page = try await ConsoleTests.get(client, "/console/accounts/alice", cookie: cookie)
            #expect(page.contains("<strong>phone</strong> (ios): not for this platform (web, linux; this device: ios)"))
            #expect(page.contains("<strong>laptop</strong> (web): available — nothing holds it back"))
            // Targeting on the app version: held on the phone, available on the laptop.
            let beta = try #require(page.components(separatedBy: "<code>beta</code>").dropFirst().first)
                .components(separatedBy: "</tr>")[0]
            #expect(beta.contains("<strong>phone</strong> (ios): pending — targeting[0]"), "\(beta)")
            #expect(beta.contains("<strong>laptop</strong> (web): available"), "\(beta)")
            // The admin API's device details carry the report too.
            let admin: HTTPFields = [.authorization: "Bearer \(console.key)"]
            try await client.execute(uri: "/admin/v1/accounts/alice", method: .get, headers: admin) { response in
                #expect(
                    String(buffer: response.body).contains(#""context":"platform=ios; appVersion=1.0; locale=en-US""#))
            }
        }
    }
}
