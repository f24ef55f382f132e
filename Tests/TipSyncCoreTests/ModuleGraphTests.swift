import Foundation
import Testing
import TipSyncTestSupport

/// ARCHITECTURE.md's module graph is `Package.swift`'s: each module depends on exactly the package's
/// modules its line names (as `swift package describe` reads them), and the server's modules form
/// one chain, so that an import crossing a layer the wrong way is a circular dependency the compiler
/// rejects. Nothing below the composition root is `public`: what another module uses is `package`.
@Suite struct ModuleGraphTests {
    /// The graph's lines: module → the package's modules it depends on.
    static func documentedGraph() throws -> [String: Set<String>] {
        let text = try String(
            contentsOf: ArchitectureTests.root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let section = try #require(text.range(of: "### Module graph")).upperBound
        let block = text[section...].split(separator: "```", maxSplits: 2, omittingEmptySubsequences: false)
        try #require(block.count == 3, "the module graph is a fenced block")
        var graph: [String: Set<String>] = [:]
        for line in block[1].split(separator: "\n") {
            let sides = line.split(separator: "→", maxSplits: 1, omittingEmptySubsequences: false)
            try #require(sides.count == 2, "a line of the graph is `module → dependencies`: \(line)")
            let module = sides[0].trimmingCharacters(in: .whitespaces)
            #expect(graph[module] == nil, "\(module) is in the graph twice")
            graph[module] = Set(
                sides[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return graph
    }

    @Test func theDocumentedGraphIsThePackages() async throws {
        let documented = try Self.documentedGraph()
        let modules = try await PackageTargets.describe().modules
        var declared: [String: Set<String>] = [:]
        for module in modules { declared[module.name] = Set(module.dependencies) }
        for name in Set(declared.keys).union(documented.keys).sorted() {
            guard let documentedDependencies = documented[name] else {
                Issue.record("ARCHITECTURE.md's module graph has no line for \(name)")
                continue
            }
            guard let declaredDependencies = declared[name] else {
                Issue.record("ARCHITECTURE.md's module graph names \(name), which Package.swift does not declare")
                continue
            }
            #expect(
                declaredDependencies == documentedDependencies,
                "\(name): Package.swift depends on \(declaredDependencies.sorted()), ARCHITECTURE.md says \(documentedDependencies.sorted())"
            )
        }
    }

    /// The server's modules, from the bottom: each depends on the one below it, so none can import
    /// one above (that would be a cycle).
    static let serverChain = [
        "TipSyncNetworking", "TipSyncServerBasics", "TipSyncStorage", "TipSyncDeviceService",
        "TipSyncOperatorService", "TipSyncServer",
    ]

    /// The storage backends, beside the chain: each on the storage's ports, and below the root only.
    static let backends = ["TipSyncSQLiteStorage", "TipSyncPostgresStorage"]

    /// Every module a module depends on, directly or below.
    static func reachable(from module: String, in graph: [String: Set<String>]) -> Set<String> {
        var seen: Set<String> = []
        var waiting = Array(graph[module] ?? [])
        while let next = waiting.popLast() {
            guard seen.insert(next).inserted else { continue }
            waiting.append(contentsOf: graph[next] ?? [])
        }
        return seen
    }

    @Test func theServerIsOneChainAndTheAppReachesNoneOfIt() throws {
        let graph = try Self.documentedGraph()
        for (index, module) in Self.serverChain.enumerated() {
            let below = Self.reachable(from: module, in: graph)
            #expect(!below.contains(module), "\(module) depends on itself")
            for lower in Self.serverChain[..<index] {
                #expect(below.contains(lower), "\(module) does not depend on \(lower)")
            }
            for higher in Self.serverChain[(index + 1)...] {
                #expect(!below.contains(higher), "\(module) depends on \(higher), above it")
            }
        }
        // No service reaches a backend; each backend reaches only the ports' side of storage.
        for module in Self.serverChain where module != "TipSyncServer" {
            let below = Self.reachable(from: module, in: graph)
            #expect(below.isDisjoint(with: Self.backends), "\(module) reaches \(below.intersection(Self.backends))")
        }
        for backend in Self.backends {
            let below = Self.reachable(from: backend, in: graph)
            #expect(below.contains("TipSyncStorage"), "\(backend) does not implement the storage's ports")
            #expect(
                below.isDisjoint(with: ["TipSyncDeviceService", "TipSyncOperatorService", "TipSyncServer"]),
                "\(backend) reaches a service")
            #expect(Self.reachable(from: "TipSyncServer", in: graph).contains(backend))
        }
        let app = Self.reachable(from: "TipSync", in: graph)
        #expect(
            app.isDisjoint(with: Self.serverChain), "the app's library reaches \(app.intersection(Self.serverChain))")
        #expect(app == ["TipSyncCore", "TipSyncMacros", "CZlib"])
    }

    /// `public` means "for other packages", and no other package uses the server's modules: each
    /// declaration another module uses is `package` (which tests see too).
    @Test func nothingInTheServersModulesIsPublic() async throws {
        // Seconds of reading: on a thread of its own, off the cooperative pool the in-process servers use.
        let found = try await offPool { () throws -> [String] in
            var found: [String] = []
            for module in Self.serverChain + Self.backends {
                let directory = ArchitectureTests.root.appendingPathComponent("Sources/\(module)")
                let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
                while let file = files?.nextObject() as? URL {
                    guard file.pathExtension == "swift" else { continue }
                    let code = ServerFolderTests.strippingCommentsAndStrings(
                        try String(contentsOf: file, encoding: .utf8))
                    for line in code.split(separator: "\n")
                    where (line.contains("public") || line.contains("open "))
                        && line.contains(/(^|\s)(public[\s(]|open\s+(class|func|var|static|override)\s)/)
                    {
                        found.append(
                            "\(module)/\(file.lastPathComponent): \(line.trimmingCharacters(in: .whitespaces))")
                    }
                }
            }
            return found
        }
        for line in found { Issue.record("\(line)") }
    }
}
