import Foundation
import Testing
import TipSyncTestSupport

/// Apps download the server (issue 32, item 5): an app that depends on the package for `TipSync`
/// resolved Hummingbird, PostgresNIO, jwt-kit and two dozen more. With the README's `traits: []`
/// a fresh app package resolves GRDB and swift-syntax only.
@Suite struct LeanPackageTests {
    @Test func anAppThatImportsTipSyncResolvesNoServerPackage() async throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let line = try #require(
            readme.split(separator: "\n").first { $0.hasPrefix(#".package(url: "https://github.com/<you>/TipSync""#) })
        #expect(line.contains("traits: []"), "the README's line is what this test resolves: \(line)")

        let app = Scratch.path("lean-app")
        try FileManager.default.createDirectory(
            at: app.appendingPathComponent("Sources/App"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: app) }
        let manifest = """
            // swift-tools-version:6.1
            import PackageDescription
            let package = Package(
                name: "LeanApp",
                platforms: [.macOS(.v15), .iOS(.v18)],
                dependencies: [.package(path: \(String(reflecting: packageRoot.path)), traits: [])],
                targets: [
                    .executableTarget(name: "App", dependencies: [.product(name: "TipSync", package: \(String(reflecting: packageRoot.lastPathComponent)))])
                ]
            )
            """
        try Data(manifest.utf8).write(to: app.appendingPathComponent("Package.swift"))
        try Data("import TipSync\n".utf8).write(to: app.appendingPathComponent("Sources/App/main.swift"))
        let resolve = try await ChildProcess.run("/usr/bin/env", ["swift", "package", "resolve"], directory: app.path)
        #expect(resolve.status == 0, "\(resolve.stderr)")
        let resolved = try String(contentsOf: app.appendingPathComponent("Package.resolved"), encoding: .utf8)
        let pins = Set(
            resolved.split(separator: "\n").compactMap { line -> String? in
                guard line.contains(#""identity""#) else { return nil }
                return line.split(separator: "\"").dropLast().last.map(String.init)
            })
        #expect(pins == ["grdb.swift", "swift-syntax"])
        let checkouts = try FileManager.default.contentsOfDirectory(
            atPath: app.appendingPathComponent(".build/checkouts").path)
        #expect(Set(checkouts) == ["GRDB.swift", "swift-syntax"])
    }
}
