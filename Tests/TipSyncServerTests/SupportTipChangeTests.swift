import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOFoundationEssentialsCompat
import Testing
import TipSync
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 73, item 5: support's most common request — reset or dismiss one tip for one account — had
/// no button and no route, and the console's tip figures had no `/admin/v1` route.
@Suite struct SupportTipChangeTests {
    static let start: Int64 = 1_800_000_000_000

    func adminHeaders(_ fixture: ServerFixture) async throws -> HTTPFields {
        let key = try await CredentialIssuance(fixture.store).createAdminKey(name: "support", at: 1).key
        return [.authorization: "Bearer \(key)"]
    }

    @Test func aResetIsWrittenAsTheAdminDeviceAfterWhatDevicesWroteAndSyncs() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone", "laptop"])
        let phone = DeviceIdentity(accountID: fixture.accountID, device: "phone")
        // The phone dismissed the tip with a clock a minute ahead of the server's.
        _ = try await fixture.store.push(
            [
                change(
                    "phone", 1, .eligibility(tip: "welcome", state: .invalidated(.tipClosed)),
                    ms: UInt64(Self.start + 60_000))
            ],
            from: phone)
        let admin = try await adminHeaders(fixture)
        try await fixture.app(now: { Self.start }).test(.router) { client in
            try await client.execute(
                uri: "/admin/v1/accounts/alice/tips/welcome/reset", method: .post, headers: admin
            ) { response in
                #expect(response.status == .ok)
                let body = try JSONParser.parse(Array(String(buffer: response.body).utf8))
                #expect(body["device"] == .string("tipsync-admin") && body["seq"] == .int(1))
                #expect(body["action"] == .string("reset"))
            }
            // The laptop pulls it, and its replica has the tip eligible again: it won.
            let pulled = try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")) {
                try JSONCoding.decode(PullResponse.self, from: Data(buffer: $0.body))
            }
            var state = ReplicaState()
            for change in pulled.changes { state.apply(change) }
            #expect(state.eligibility(of: "welcome") == .eligible)
            let written = try #require(pulled.changes.last)
            #expect(written.device == "tipsync-admin")
            #expect(written.hlc > HLC(milliseconds: UInt64(Self.start + 60_000), counter: 0))
            // Dismiss writes the next change of the admin device.
            try await client.execute(
                uri: "/admin/v1/accounts/alice/tips/welcome/dismiss", method: .post, headers: admin
            ) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#""seq":2"#))
            }
            #expect(try await fixture.store.highestSeq(account: fixture.accountID, device: "tipsync-admin") == 2)
            // Refusals name what is wrong.
            try await client.execute(
                uri: "/admin/v1/accounts/alice/tips/welcome/explode", method: .post, headers: admin
            ) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/admin/v1/accounts/nobody/tips/welcome/reset", method: .post, headers: admin)
            {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/admin/v1/accounts/alice/tips/welcome/reset", method: .post) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test func theTipFiguresHaveARouteInJSONAndCSV() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        let phone = DeviceIdentity(accountID: fixture.accountID, device: "phone")
        _ = try await fixture.store.push(
            [
                change(
                    "phone", 1, .display(tip: "=welcome", epoch: nil, count: 2, duration: 3, lastDisplayed: Self.start),
                    ms: UInt64(Self.start)),
                change(
                    "phone", 2, .eligibility(tip: "=welcome", state: .invalidated(.tipClosed)),
                    ms: UInt64(Self.start + 1)),
            ], from: phone)
        try await TipUsageDerivation(fixture.store).summarizeTipUsage(account: fixture.accountID)
        let admin = try await adminHeaders(fixture)
        try await fixture.app().test(.router) { client in
            try await client.execute(uri: "/admin/v1/tips", method: .get, headers: admin) { response in
                #expect(response.status == .ok)
                let body = try JSONParser.parse(Array(String(buffer: response.body).utf8))
                guard case .array(let tips)? = body["tips"], let tip = tips.first else {
                    Issue.record("no tips")
                    return
                }
                #expect(tip["tip"] == .string("=welcome") && tip["accounts"] == .int(1))
                #expect(tip["displayedAccounts"] == .int(1))
                #expect(tip["invalidated"]?["tipClosed"] == .int(1))
                #expect(tip["displayBuckets"]?["2–3"] == .int(1))
            }
            try await client.execute(uri: "/admin/v1/tips?format=csv", method: .get, headers: admin) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/csv; charset=utf-8")
                let lines = String(buffer: response.body).components(separatedBy: "\r\n")
                #expect(lines[0].hasPrefix("tip,accounts,displayedAccounts,tipClosed,actionPerformed,"))
                // The tip id starts with `=`: neutralized, never a formula.
                #expect(lines[1].hasPrefix("'=welcome,1,1,1,0,"))
            }
            try await client.execute(uri: "/admin/v1/tips?format=xml", method: .get, headers: admin) {
                #expect($0.status == .badRequest)
            }
        }
    }

    @Test func theConsoleHasResetAndDismissButtons() async throws {
        let console = try await ConsoleTests.Console.make()
        try await console.app().test(.router) { client in
            let (cookie, csrf) = try await ConsoleTests.login(client, key: console.key)
            try await console.seed(client)
            let page = try await ConsoleTests.get(client, "/console/accounts/alice", cookie: cookie)
            #expect(page.contains(#"action="/console/accounts/alice/tips/welcome/reset""#))
            #expect(page.contains(#"action="/console/accounts/alice/tips/welcome/dismiss""#))
            let reset = try await ConsoleTests.post(
                client, "/console/accounts/alice/tips/welcome/reset", cookie: cookie, form: "csrf=\(csrf)")
            #expect(reset.status == .seeOther)
            #expect(reset.location?.removingPercentEncoding?.contains("Reset welcome") == true)
            let after = try await ConsoleTests.get(client, "/console/accounts/alice", cookie: cookie)
            #expect(after.contains("tipsync-admin"))
            // The support device makes no requests, and is not listed as a device that went quiet.
            let overview = try await ConsoleTests.get(client, "/console?quiet=1", cookie: cookie)
            #expect(!overview.contains(">tipsync-admin</td>"))
            // Without the session's CSRF token nothing is written.
            let forged = try await ConsoleTests.post(
                client, "/console/accounts/alice/tips/welcome/dismiss", cookie: cookie, form: "csrf=nope")
            #expect(forged.status == .forbidden)
            #expect(
                try await console.fixture.store.highestSeq(account: console.fixture.accountID, device: "tipsync-admin")
                    == 1)
        }
    }
}
