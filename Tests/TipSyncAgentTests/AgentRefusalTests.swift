import Foundation
import Testing
import TipSyncCore

@testable import TipSyncAgent

/// What the catalog does not declare is refused, on the CLI's code path and the local API alike,
/// with one list of error codes shared by the code and the README.
@Suite struct AgentRefusalTests {
    func agent() throws -> Agent {
        let store = AgentStore(directory: scratchDirectory().appendingPathComponent("store"))
        try store.initialize(
            AgentConfiguration(server: URL(string: "http://127.0.0.1:1")!, token: "ts_unused", device: "phone"))
        let agent = try Agent(store: store)
        _ = try agent.loadCatalog(from: packageRoot.appendingPathComponent("Examples/catalog.json"))
        return agent
    }

    func code(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as AgentError {
            return error.code
        } catch {
            return "not an AgentError: \(error)"
        }
    }

    /// A misspelled event used to answer `{"ok":true}` and sync to every device.
    @Test func donatingToAnUndeclaredEventIsRefusedAndStoresNothing() throws {
        let agent = try agent()
        let before = try agent.replica.localChanges()
        #expect(code { try agent.donate(event: "opened-detial") } == "unknown-event")
        do {
            try agent.donate(event: "opened-detial")
        } catch let error as AgentError {
            #expect(error.message.contains("'opened-detial'"))
            #expect(error.message.contains("opened-detail"))  // says what the catalog has
        }
        #expect(try agent.replica.localChanges() == before)
        #expect(code { try agent.donate(event: "opened-detail") } == nil)
    }

    @Test func settingAnUndeclaredParameterIsRefused() throws {
        let agent = try agent()
        #expect(code { try agent.setParameter("isLogedIn", to: .bool(true)) } == "unknown-parameter")
    }

    @Test func theLocalAPIRefusesTheSameWithTheSameCodes() async throws {
        let agent = try agent()
        let handler = LocalAPIHandler(agent: agent)
        let donate = try LocalAPIHandler.decode(Data(#"{"op":"donate","event":"nope"}"#.utf8))
        let line = await handler.respond(to: donate)
        #expect(line.hasPrefix(#"{"ok":false,"error":{"code":"unknown-event""#))
        let set = try LocalAPIHandler.decode(Data(#"{"op":"param-set","name":"nope","value":1}"#.utf8))
        #expect(await handler.respond(to: set).contains(#""code":"unknown-parameter""#))
    }

    /// A line that is not JSON is `bad-json` (as the README always said); JSON that is not a
    /// request is `bad-request`.
    @Test func malformedLinesAreBadJSONAndWrongRequestsBadRequest() {
        #expect(code { _ = try LocalAPIHandler.decode(Data("{not json".utf8)) } == "bad-json")
        #expect(code { _ = try LocalAPIHandler.decode(Data(#"{"op":"fly"}"#.utf8)) } == "bad-request")
        #expect(code { _ = try LocalAPIHandler.decode(Data(#"{"tip":"welcome"}"#.utf8)) } == "bad-request")
    }

    /// The README's table of codes is exactly `AgentError.Code`.
    @Test func theReadmeListsExactlyTheCodesTheAgentReports() throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "| code | meaning |\n|---|---|\n"))
        let table = readme[start.upperBound...].prefix { _ in true }.split(separator: "\n").prefix {
            $0.hasPrefix("| `")
        }
        let documented = table.compactMap { row in row.split(separator: "`").dropFirst().first.map(String.init) }
        #expect(documented == AgentError.Code.allCases.map(\.rawValue))
    }

    /// `invalidate --help` listed four reasons and accepted two (issue 30, agent CLI quirks): it
    /// lists the two an app may write.
    @Test func invalidateListsTheReasonsItAccepts() async throws {
        let help = try await runTool("tipsync-agent", ["invalidate", "--help"])
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")  // unwrapped
        #expect(text.contains("values: actionPerformed, tipClosed;"), "\(text)")
        #expect(!text.contains("displayCountExceeded"))
    }
}
