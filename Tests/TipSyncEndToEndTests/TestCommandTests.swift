import Foundation
import Testing
import TipSyncServerTestSupport

/// Issue 73, item 8: the README's test command did not install what the suite needs on a fresh
/// machine (only `.ci/run` did). It is `scripts/test`, `.ci/run` runs exactly it, and the README
/// names what it installs.
@Suite struct TestCommandTests {
    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static func text(_ path: String) throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func theReadmesTestCommandIsWhatCIRunsAndSaysWhatItInstalls() throws {
        let readme = try Self.text("README.md")
        let section = try #require(readme.components(separatedBy: "## The two commands").dropFirst().first)
        let firstBlock = try #require(section.components(separatedBy: "```sh\n").dropFirst().first)
        #expect(firstBlock.hasPrefix("scripts/test\n```"))
        let ci = try Self.text(".ci/run").split(separator: "\n").map(String.init)
        #expect(ci.contains("scripts/test"))
        #expect(!ci.contains { $0.hasPrefix("swift test") }, ".ci/run runs the tests only through scripts/test")
        let script = try Self.text("scripts/test")
        for package in ["libsqlite3-dev", "zlib1g-dev", "postgresql", "chromium", "nodejs", "node-typescript", "npm"] {
            #expect(script.contains("need_apt+=(\(package))"), "scripts/test installs \(package)")
            #expect(section.contains(package), "the README says scripts/test installs \(package)")
        }
        #expect(script.contains("swift test"))
    }
}
