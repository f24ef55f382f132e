import Foundation
import Testing

/// A file the agent cannot read or write is one line naming the path and why, in plain words, and
/// what to do where there is something to do (issue 53, item 3). Before, these printed Foundation's
/// `Error Domain=NSCocoaErrorDomain Code=4 … UserInfo={…}` or `cannot read PATH` with no reason.
@Suite struct AgentFileErrorTests {
    /// Runs `tipsync-agent ARGS`, requires exit status 1 and one line on stderr; returns the line.
    func failure(_ arguments: [String]) async throws -> String {
        let result = try await runTool("tipsync-agent", arguments)
        #expect(result.status == 1, "\(arguments): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(!result.stderr.contains("Domain") && !result.stderr.contains("UserInfo"), "\(result.stderr)")
        return String(lines.first ?? "")
    }

    @Test func eachFileErrorNamesThePathAndWhy() async throws {
        let directory = scratchDirectory()
        let store = directory.appendingPathComponent("store").path
        let plainFile = directory.appendingPathComponent("a-file").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: plainFile))
        _ = try await runTool(
            "tipsync-agent",
            ["init", "--store", store, "--server", "http://127.0.0.1:1", "--token", "ts_x", "--device", "d"])

        #expect(
            try await failure(["catalog", "load", "/nonexistent.json", "--store", store])
                == "tipsync-agent: cannot read /nonexistent.json: no such file or directory")
        #expect(
            try await failure(["catalog", "load", directory.path, "--store", store])
                == "tipsync-agent: cannot read \(directory.path): it is a directory")
        #expect(
            try await failure(["export-history", "\(plainFile)/history.json", "--store", store])
                == "tipsync-agent: cannot write \(plainFile)/history.json: not a directory")
        #expect(
            try await failure([
                "init", "--store", "\(plainFile)/store", "--server", "http://127.0.0.1:1", "--token", "ts_x",
                "--device", "d",
            ])
                == "tipsync-agent: cannot create the store at \(plainFile)/store: not a directory; give --store (or TIPSYNC_STORE) a directory you can write"
        )

        let configuration = URL(fileURLWithPath: store).appendingPathComponent("agent.json")
        try Data("{".utf8).write(to: configuration)
        #expect(
            try await failure(["status", "--store", store])
                == "tipsync-agent: \(configuration.path) is damaged (not valid JSON); run `tipsync-agent init` again for this store"
        )
        try Data(#"{"server": "http://127.0.0.1:1"}"#.utf8).write(to: configuration)
        #expect(
            try await failure(["status", "--store", store])
                == "tipsync-agent: \(configuration.path) is damaged ('token' is missing); run `tipsync-agent init` again for this store"
        )
    }
}
