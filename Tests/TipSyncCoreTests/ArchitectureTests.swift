import Foundation
import Testing
import TipSyncTestSupport

/// ARCHITECTURE.md's table of targets is what the sources do: every target `Package.swift` declares
/// (those under `Examples/` too) has a row, and imports only the modules its row names (besides the
/// platform's), however it imports them (`@_exported`, `@testable`, an access level).
@Suite struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let platform: Set<String> = [
        "Foundation", "FoundationNetworking", "Synchronization", "Dispatch", "Glibc", "Darwin",
        // Where a clean build finds C structs' members (`timespec.tv_sec`) under MemberImportVisibility.
        "CoreFoundation",
    ]

    /// Each target's row (three columns: target, what it holds, what it may import): the modules it may
    /// import. The two-column table of test targets is not read here.
    static func allowedImports() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        var rows: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 5, let target = cells[1].firstMatch(of: /^`([A-Za-z0-9-]+)`$/)?.1 else { continue }
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
            for line in text.split(separator: "\n") where line.contains("import ") {
                guard
                    let match = line.firstMatch(
                        of:
                            /^\s*(?:@testable |@_exported |@preconcurrency |@_implementationOnly |@_spi\(\w+\) |public |package |internal |private |fileprivate )*import (?:(?:struct|class|enum|protocol|typealias|func|var|let) )?(\w+)/
                    )
                else {
                    continue
                }
                found[String(match.1), default: []].append(file.lastPathComponent)
            }
        }
        return found
    }

    @Test func everyTargetImportsOnlyWhatArchitectureMdAllows() async throws {
        let allowed = try Self.allowedImports()
        let modules = try await PackageTargets.describe().modules
        #expect(modules.count >= 19)
        // Reading every file: on a thread of its own, off the cooperative pool the in-process servers use.
        let problems = try await offPool { () throws -> [String] in
            var problems: [String] = []
            for target in modules.sorted(by: { $0.name < $1.name }) {
                guard let allowedModules = allowed[target.name] else {
                    problems.append("ARCHITECTURE.md has no row for the target \(target.name) (\(target.path))")
                    continue
                }
                for (module, files) in try Self.imports(under: Self.root.appendingPathComponent(target.path))
                where !allowedModules.contains(module) && !Self.platform.contains(module) {
                    problems.append(
                        "\(target.name) imports \(module) (\(files.sorted().joined(separator: ", "))), which ARCHITECTURE.md does not allow it"
                    )
                }
            }
            return problems
        }
        for problem in problems { Issue.record("\(problem)") }
        #expect(Set(allowed.keys) == Set(modules.map(\.name)), "rows for targets that do not exist")
    }

    /// The checker reads every form of import a file may use.
    @Test func everyFormOfImportIsRead() throws {
        let directory = Scratch.path("imports")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = """
            import Plain
            @_exported import Exported
            @testable import Testable
            package import Package
            @preconcurrency import Preconcurrency
            import struct Member.Thing
            #if canImport(Glibc)
                import Glibc
            #endif
            """
        try Data(text.utf8).write(to: directory.appendingPathComponent("File.swift"))
        #expect(
            Set(try Self.imports(under: directory).keys)
                == ["Plain", "Exported", "Testable", "Package", "Preconcurrency", "Member", "Glibc"])
    }
}
