import Foundation
import Testing
import TipSyncServerTestSupport
import TipSyncTestSupport

/// The JavaScript client (`clients/web/`) as part of the README's one test command: its own tests
/// (`node --test`: the conformance corpus's second runner, in a second language, and sync against the
/// real `tipsync-server`), none skipped, and its types
/// checked by TypeScript with the shipped `.d.ts` files current. Runs where Node and TypeScript are
/// installed; `scripts/test` installs them and sets `TIPSYNC_REQUIRE_BROWSER=1`, so CI never skips it.
@Suite(
    .enabled(
        if: InstalledTool.path("node") != nil || ProcessInfo.processInfo.environment["TIPSYNC_REQUIRE_BROWSER"] != nil,
        "needs node (and tsc): apt-get install -y nodejs node-typescript"))
struct WebClientTests {
    static let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("clients/web")

    @Test func theJavaScriptClientPassesItsTestsAndTheCorpus() async throws {
        let node = try #require(InstalledTool.path("node"), "node is not installed")
        // The sync tests run against the tipsync-server this test run built.
        let server = ServerProcess.productsDirectory.appendingPathComponent("tipsync-server").path
        let result = try await ChildProcess.run(
            node, ["--test", "test/"], environment: ["TIPSYNC_SERVER_BIN": server], directory: Self.client.path)
        #expect(result.status == 0, "node --test failed:\n\(result.stdout.suffix(6000))\n\(result.stderr.suffix(2000))")
        let passed = result.stdout.split(separator: "\n").first { $0.hasPrefix("# pass ") }
        #expect(result.stdout.contains("# skipped 0"), "a JavaScript test was skipped:\n\(result.stdout.suffix(3000))")
        #expect(
            passed.flatMap { Int($0.dropFirst("# pass ".count)) }.map { $0 >= 52 } == true, "\(passed ?? "no count")")
    }

    /// `tsc` checks the JSDoc types of every source file and writes the declarations; they must equal
    /// the ones in `clients/web/types/` (regenerate: `cd clients/web && tsc -p tsconfig.json`).
    @Test func theTypesCheckAndTheShippedDeclarationsAreCurrent() async throws {
        let tsc = try #require(InstalledTool.path("tsc"), "tsc is not installed (apt-get install -y node-typescript)")
        let output = Scratch.path("tipsync-web-types")
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try await ChildProcess.run(
            tsc, ["-p", "tsconfig.json", "--outDir", output.path], directory: Self.client.path)
        #expect(result.status == 0, "tsc found type errors:\n\(result.stdout)\n\(result.stderr)")
        let shipped = Self.client.appendingPathComponent("types")
        let names = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(names == (try FileManager.default.contentsOfDirectory(atPath: shipped.path).sorted()))
        for name in names {
            let fresh = try String(contentsOf: output.appendingPathComponent(name), encoding: .utf8)
            let committed = try? String(contentsOf: shipped.appendingPathComponent(name), encoding: .utf8)
            #expect(fresh == committed, "clients/web/types/\(name) is stale: run tsc -p tsconfig.json in clients/web")
        }
    }

    /// `tsc` reads a JSDoc tag only where a line of the comment starts with one: in `/** Text.
    /// @type {X} */` on one line the type was ignored and the member was `any`, unchecked (62 such
    /// comments, `TipSync.configure`'s options among them). The types are checked with `strict` (null
    /// checks, no implicit `any`, `unknown` in `catch`), and no comment writes a tag `tsc` would not read.
    @Test func everyTypeTagIsReadAndTheChecksAreStrict() throws {
        let config = try JSONSerialization.jsonObject(
            with: Data(contentsOf: Self.client.appendingPathComponent("tsconfig.json")))
        let options = (config as? [String: Any])?["compilerOptions"] as? [String: Any]
        #expect(options?["strict"] as? Bool == true)
        #expect(
            options?["strictNullChecks"] == nil && options?["noImplicitAny"] == nil, "no strict check is turned off")
        let sources = Self.client.appendingPathComponent("src")
        var unread: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
        where name.hasSuffix(".js") {
            let text = try String(contentsOf: sources.appendingPathComponent(name), encoding: .utf8)
            var inComment = false
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                var body: Substring
                if trimmed.hasPrefix("/**") {
                    inComment = true
                    body = trimmed.dropFirst(3)
                } else if inComment, trimmed.hasPrefix("*") {
                    body = trimmed.dropFirst()
                } else {
                    inComment = false
                    continue
                }
                if let end = body.range(of: "*/") {
                    inComment = false
                    body = body[..<end.lowerBound]
                }
                let content = body.trimmingCharacters(in: .whitespaces)
                if content.hasPrefix("@") { continue }
                // Types (`{…}`) and code (`…`) may hold an `@`; a tag stands after white space.
                let prose = content.replacing(/\{[^{}]*\}/, with: "").replacing(/`[^`]*`/, with: "")
                if prose.contains(/\s@(param|returns|return|type|template|typedef|property)\b/) {
                    unread.append("\(name):\(number + 1): \(trimmed)")
                }
            }
        }
        #expect(
            unread.isEmpty,
            "tags tsc does not read (start a line of the comment with each):\n\(unread.joined(separator: "\n"))")
    }
}

/// Where a command-line tool is installed, if it is.
enum InstalledTool {
    static func path(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/usr/local/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
