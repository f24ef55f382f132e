import Foundation
import Testing

/// ARCHITECTURE.md's table of targets is what the sources do: every target under `Sources/` has a
/// row, and imports only the modules its row names (besides the platform's).
@Suite struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let platform: Set<String> = [
        "Foundation", "FoundationNetworking", "Synchronization", "Dispatch", "Glibc", "Darwin",
    ]

    /// Each target's row: the modules it may import.
    static func allowedImports() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        var rows: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4, let target = cells[1].firstMatch(of: /^`([A-Za-z0-9-]+)`$/)?.1 else { continue }
            let modules =
                cells[3] == "—" ? [] : cells[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            rows[String(target)] = Set(modules)
        }
        return rows
    }

    /// The modules the Swift files under `directory` import.
    static func imports(under directory: URL) throws -> [String: [String]] {
        var found: [String: [String]] = [:]
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let match = line.firstMatch(of: /^\s*(?:@testable |public |@_spi\(\w+\) )*import (\w+)/) else {
                    continue
                }
                found[String(match.1), default: []].append(file.lastPathComponent)
            }
        }
        return found
    }

    @Test func everyTargetImportsOnlyWhatArchitectureMdAllows() throws {
        let allowed = try Self.allowedImports()
        let sources = Self.root.appendingPathComponent("Sources")
        let targets = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { !$0.hasPrefix(".") }
        #expect(targets.count >= 12)
        for target in targets.sorted() {
            guard let modules = allowed[target] else {
                Issue.record("ARCHITECTURE.md has no row for the target \(target)")
                continue
            }
            for (module, files) in try Self.imports(under: sources.appendingPathComponent(target))
            where !modules.contains(module) && !Self.platform.contains(module) {
                Issue.record(
                    "\(target) imports \(module) (\(files.sorted().joined(separator: ", "))), which ARCHITECTURE.md does not allow it"
                )
            }
        }
        #expect(Set(allowed.keys) == Set(targets), "rows for targets that do not exist")
    }
}
