import Foundation
import Testing
import TipSync
import TipSyncCore
import TipSyncTestSupport

@testable import TipSyncAgent

/// What the catalog does not declare is refused, on the CLI's code path and the local API alike,
/// with one list of error codes shared by the code and the README.
@Suite struct AgentRefusalTests {
    func agent() throws -> Agent { try exampleAgent() }

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

/// The agent CLI quirks met by a client written from the documents (issue 30).
@Suite struct AgentCommandLineTests {
    func store() throws -> (environment: [String: String], directory: URL) {
        let directory = Scratch.path("agent-cli")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (["TIPSYNC_STORE": directory.appendingPathComponent("store").path], directory)
    }

    /// `param set level -5` was "Unknown option '-5'"; a negative number needed `--` before it.
    @Test func aNegativeValueNeedsNoDoubleDash() async throws {
        let (environment, directory) = try store()
        defer { try? FileManager.default.removeItem(at: directory) }
        let catalog = directory.appendingPathComponent("catalog.json")
        try Data(#"{"parameters": [{"id": "level", "default": 0}]}"#.utf8).write(to: catalog)
        _ = try await runTool(
            "tipsync-agent", ["init", "--server", "http://127.0.0.1:9", "--token", "t", "--device", "d"],
            environment: environment)
        #expect(
            try await runTool("tipsync-agent", ["catalog", "load", catalog.path], environment: environment).status == 0)
        for (value, printed) in [("-5", "-5"), ("-2.5e3", "-2500"), ("-0.25", "-0.25")] {
            let set = try await runTool("tipsync-agent", ["param", "set", "level", value], environment: environment)
            #expect(set.status == 0, "\(set.stderr)")
            let get = try await runTool("tipsync-agent", ["param", "get", "level"], environment: environment)
            #expect(get.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == printed)
        }
        let two = try await runTool("tipsync-agent", ["param", "set", "level", "1", "2"], environment: environment)
        #expect(two.status != 0 && two.stderr.contains("expected one JSON value, got 2"))
    }

    /// `status` listed tips sorted by id; it lists them in the catalog's order.
    @Test func statusListsTipsInCatalogOrder() async throws {
        let (environment, directory) = try store()
        defer { try? FileManager.default.removeItem(at: directory) }
        let catalog = directory.appendingPathComponent("catalog.json")
        try Data(
            #"{"tips": [{"id": "zeta", "title": "Z"}, {"id": "alpha", "title": "A"}, {"id": "mid", "title": "M"}]}"#
                .utf8
        )
        .write(to: catalog)
        _ = try await runTool(
            "tipsync-agent", ["init", "--server", "http://127.0.0.1:9", "--token", "t", "--device", "d"],
            environment: environment)
        _ = try await runTool("tipsync-agent", ["catalog", "load", catalog.path], environment: environment)
        let status = try await runTool("tipsync-agent", ["status"], environment: environment)
        let ids = status.stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] }
        #expect(ids == ["zeta", "alpha", "mid"])
    }
}
