import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 73, item 1: the web team's whole-catalog upload of the product file (one tip switched off)
/// answered `200` and silently deleted the iOS team's part (`removed widgets`). An upload that would
/// remove what a platform's part added is refused naming it — on the admin API, the CLI and the
/// console — unless the operator says to replace everything.
@Suite struct PlatformPartUploadTests {
    static let product = #"{"tips": [{"id": "welcome", "title": "Welcome"}, {"id": "search", "title": "Search"}]}"#
    static let productWithOneOff =
        #"{"tips": [{"id": "welcome", "title": "Welcome"}, {"id": "search", "title": "Search", "enabled": false}]}"#
    static let iosPart =
        #"{"displayFrequency": "daily", "tips": [{"id": "widgets", "title": "Widgets"}, {"id": "shortcuts", "title": "Shortcuts"}]}"#

    @Test func theRuleNamesEachPartsTipAndSettingsThatWouldGo() throws {
        let stored = try Catalog(validating: Array(Self.product.utf8))
            .merging(try Catalog(validating: Array(Self.iosPart.utf8)), as: "ios")
        let upload = try Catalog(validating: Array(Self.productWithOneOff.utf8))
        #expect(
            stored.platformPartsRemoved(by: upload) == ["widgets (ios)", "shortcuts (ios)", "platformSettings.ios"])
        // The stored catalog itself, or the upload with the part's tips in it, removes nothing.
        #expect(stored.platformPartsRemoved(by: stored).isEmpty)
        var keeping = upload
        keeping.tips += stored.tips.filter { $0.platforms != nil }
        keeping.platformSettings = stored.platformSettings
        #expect(stored.platformPartsRemoved(by: keeping).isEmpty)
        // Tips for every platform are the whole catalog's own: removing one is an ordinary upload.
        #expect(upload.platformPartsRemoved(by: Catalog()).isEmpty)
    }

    @Test func theAdminAPIRefusesAnUploadThatDropsAPartUnlessToldToReplaceAll() async throws {
        let fixture = try await ServerFixture.make()
        let key = try await CredentialIssuance(fixture.store).createAdminKey(name: "ops", at: 1).key
        let admin: HTTPFields = [.authorization: "Bearer \(key)"]
        try await fixture.app().test(.router) { client in
            func put(_ uri: String, _ text: String) async throws -> (HTTPResponse.Status, String) {
                try await client.execute(uri: uri, method: .put, headers: admin, body: ByteBuffer(string: text)) {
                    ($0.status, String(buffer: $0.body))
                }
            }
            #expect(try await put("/admin/v1/catalog", Self.product).0 == .ok)
            #expect(try await put("/admin/v1/catalog/platforms/ios", Self.iosPart).0 == .ok)
            let refused = try await put("/admin/v1/catalog", Self.productWithOneOff)
            #expect(refused.0 == .badRequest)
            let error = try JSONCoding.decode(ErrorBody.self, from: Data(refused.1.utf8)).error
            #expect(error.code == "invalid_parameter")
            #expect(error.message.hasPrefix("tips: "))
            #expect(error.message.contains("widgets (ios), shortcuts (ios), platformSettings.ios"))
            #expect(error.message.contains("replaceAll=true"))
            // Nothing was stored: the iOS tips are still there.
            let kept = try Catalog(validating: Array(try #require(try await fixture.store.catalogJSON()).utf8))
            #expect(kept.tips.map(\.id) == ["welcome", "search", "widgets", "shortcuts"])
            #expect(try await fixture.store.catalogVersions().count == 2)
            // A bad flag is named; the explicit one replaces everything.
            #expect(try await put("/admin/v1/catalog?replaceAll=yes", Self.productWithOneOff).0 == .badRequest)
            #expect(try await put("/admin/v1/catalog?replaceAll=true", Self.productWithOneOff).0 == .ok)
            let replaced = try Catalog(validating: Array(try #require(try await fixture.store.catalogJSON()).utf8))
            #expect(replaced.tips.map(\.id) == ["welcome", "search"])
        }
    }

    @Test func theConsoleNamesWhatWouldGoBesideTheBoxThatReplacesAll() async throws {
        let console = try await ConsoleTests.Console.make()
        try await console.app().test(.router) { client in
            let (cookie, csrf) = try await ConsoleTests.login(client, key: console.key)
            func upload(_ text: String, platform: String = "", replaceAll: Bool = false) async throws -> (
                HTTPResponse.Status, String
            ) {
                var headers = HTTPFields()
                headers[.cookie] = cookie
                headers[.contentType] = "application/x-www-form-urlencoded"
                let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let form = "csrf=\(csrf)&catalog=\(encoded)&platform=\(platform)" + (replaceAll ? "&replaceAll=1" : "")
                return try await client.execute(
                    uri: "/console/catalog", method: .post, headers: headers, body: ByteBuffer(string: form)
                ) { ($0.status, String(buffer: $0.body)) }
            }
            #expect(try await upload(Self.product).0 == .seeOther)
            #expect(try await upload(Self.iosPart, platform: "ios").0 == .seeOther)
            let refused = try await upload(Self.productWithOneOff)
            #expect(refused.0 == .badRequest)
            #expect(refused.1.contains("Not stored, nothing changed"))
            #expect(refused.1.contains("<strong>widgets (ios), shortcuts (ios), platformSettings.ios</strong>"))
            #expect(refused.1.contains(#"id="catalog-replace-all""#))
            #expect(try await console.fixture.store.catalogVersions().count == 2)
            #expect(try await upload(Self.productWithOneOff, replaceAll: true).0 == .seeOther)
            #expect(try await console.fixture.store.catalogVersions().count == 3)
        }
    }

    @Test func theCommandLineRefusesItUnlessGivenReplaceAll() async throws {
        let directory = Scratch.directory("tipsync-parts")
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        func file(_ name: String, _ text: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            try text.write(to: url, atomically: true, encoding: .utf8)
            return url.path
        }
        let product = try file("product.json", Self.product)
        let ios = try file("ios-part.json", Self.iosPart)
        let off = try file("product-off.json", Self.productWithOneOff)
        #expect(try await ServerProcess.run(["migrate", "--database", database]).status == 0)
        #expect(try await ServerProcess.run(["catalog", "put", product, "--database", database]).status == 0)
        #expect(
            try await ServerProcess.run(["catalog", "put", ios, "--platform", "ios", "--database", database])
                .status
                == 0)
        let refused = try await ServerProcess.run(["catalog", "put", off, "--database", database])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("widgets (ios), shortcuts (ios), platformSettings.ios"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--replace-all"))
        let replaced = try await ServerProcess.run([
            "catalog", "put", off, "--replace-all", "--database", database,
        ])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stdout.contains("version 3"))
    }
}
