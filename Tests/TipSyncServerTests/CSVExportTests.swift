import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 74, item 1: the experiments export wrote account names as they were, so `=HYPERLINK(…)` (an
/// identity provider's `sub`, or a name given to the admin API) ran when an operator opened the file
/// in a spreadsheet. Every cell of every CSV the server writes is neutralized (`CSVText`).
@Suite struct CSVExportTests {
    @Test func aCellThatASpreadsheetWouldReadAsAFormulaIsText() {
        #expect(CSVText.cell("carol") == "carol")
        #expect(CSVText.cell("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"")
        #expect(CSVText.cell("=cmd|' /C calc'!A0") == "'=cmd|' /C calc'!A0")
        #expect(CSVText.cell("+1") == "'+1")
        #expect(CSVText.cell("-2+3") == "'-2+3")
        #expect(CSVText.cell("@SUM(A1)") == "'@SUM(A1)")
        #expect(CSVText.cell("\tx") == "'\tx")
        #expect(CSVText.cell("\rx") == "\"'\rx\"")
        #expect(CSVText.cell("a,b") == "\"a,b\"")
        #expect(CSVText.cell("") == "")
        #expect(CSVText.line(["a", "=b"]) == "a,'=b\r\n")
    }

    static let hostile = "=HYPERLINK(\"http://evil.example\",\"click\")"

    /// An account with a hostile name that reached the experiment, summarized.
    static func admin() async throws -> ExperimentServerTests.Admin {
        let fixture = try await ServerFixture.make(devices: ["phone"], account: hostile)
        try await CatalogComposition(fixture.store).putCatalogJSON(
            #"{"events": [{"id": "searched"}], "tips": [{"id": "search", "title": "Search"}]}"#)
        let admin = ExperimentServerTests.Admin(
            fixture: fixture,
            key: try await CredentialIssuance(fixture.store).createAdminKey(name: "backend", at: 1).key)
        let start = ExperimentServerTests.start
        _ = try await ExperimentControl(fixture.store).startExperiment(
            TipExperiment(id: "search-holdout", holdout: 25, goal: .event("searched")), onTip: "search", by: "t",
            at: Int64(start))
        _ = try await fixture.store.push(
            [ExperimentServerTests.donation("phone", 1, "tipsync.reach:search-holdout", at: start, arm: "holdout")],
            from: DeviceIdentity(accountID: fixture.accountID, device: "phone"))
        try await TipUsageDerivation(fixture.store).summarizeTipUsage(account: fixture.accountID)
        return admin
    }

    /// The export's first two lines up to the arm (which the account's bucket decides).
    static let expected =
        "account,arm,reachedAt,exposedAt,convertedAt\r\n"
        + "\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"click\"\")\","

    @Test func theAdminAPIsExportNeutralizesEveryCell() async throws {
        let admin = try await Self.admin()
        try await admin.fixture.app().test(.router) { client in
            try await client.execute(
                uri: "/admin/v1/experiments/search-holdout/participants?format=csv", method: .get,
                headers: admin.headers
            ) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).hasPrefix(Self.expected), "\(String(buffer: response.body))")
            }
        }
    }

    @Test func theConsolesExportNeutralizesEveryCell() async throws {
        let admin = try await Self.admin()
        var configuration = ServerConfiguration()
        configuration.console = true
        try await admin.fixture.app(configuration: configuration).test(.router) { client in
            let (cookie, _) = try await ConsoleTests.login(client, key: admin.key)
            var headers = HTTPFields()
            headers[.cookie] = cookie
            try await client.execute(
                uri: "/console/experiments/search-holdout/export?format=csv", method: .get, headers: headers
            ) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).hasPrefix(Self.expected), "\(String(buffer: response.body))")
            }
            // Issue 74, item 5: the experiment's page says participation shows a few seconds late.
            let page = try await ConsoleTests.get(client, "/console/experiments/search-holdout", cookie: cookie)
            #expect(page.contains("id=\"participation-delay\""))
        }
    }

    @Test func theCommandLinesExportIsTheSameWriter() async throws {
        let admin = try await Self.admin()
        #expect(
            try await ExperimentControl(admin.fixture.store).experimentParticipantsText("search-holdout", csv: true)
                .hasPrefix(
                    Self.expected))
    }
}
