import Foundation
import Testing
import TipSyncTestSupport

/// ARCHITECTURE.md's table of server folders is what the server's modules do: every folder
/// has a row, and a file uses a type declared in another folder only when its folder's row names
/// that folder. Types are found by their declarations at the top level of a file (`struct`,
/// `class`, `enum`, `actor`, `protocol`, `typealias`), uses by the type's name outside comments and
/// string literals.
@Suite struct ServerFolderTests {
    /// The server's modules whose folders are its layers: `TipSyncServerBasics` (`Lifecycle/`,
    /// `Basics/`, `BodyCoding/`), `TipSyncStorage` (`Records/`, `Ports/`, `Policy/`, `Location/`), its
    /// backends (each one layer: `SQLite/`, `PostgreSQL/`), `TipSyncDeviceService`,
    /// `TipSyncOperatorService` and `TipSyncServer` (`Application/`). The compiler keeps a module from
    /// using one it does not depend on (`ModuleGraphTests`); this test keeps the folders within a
    /// module to the table, which only a test can see.
    static let modules: [(directory: URL, folder: String?)] = [
        (ArchitectureTests.root.appendingPathComponent("Sources/TipSyncServerBasics"), nil),
        (ArchitectureTests.root.appendingPathComponent("Sources/TipSyncStorage"), nil),
        (ArchitectureTests.root.appendingPathComponent("Sources/TipSyncSQLiteStorage"), "SQLite"),
        (ArchitectureTests.root.appendingPathComponent("Sources/TipSyncPostgresStorage"), "PostgreSQL"),
        (ArchitectureTests.root.appendingPathComponent("Sources/TipSyncDeviceService"), nil),
        (ArchitectureTests.root.appendingPathComponent("Sources/TipSyncOperatorService"), nil),
        (ArchitectureTests.root.appendingPathComponent("Sources/TipSyncServer"), nil),
    ]

    /// Each folder's row: the folders it may use (`nil`: every folder).
    static func allowedFolders() throws -> [String: Set<String>?] {
        let text = try String(
            contentsOf: ArchitectureTests.root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        var rows: [String: Set<String>?] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4, let folder = cells[1].firstMatch(of: /^`([A-Za-z]+)\/`$/)?.1 else { continue }
            switch cells[3] {
            case "—": rows[String(folder)] = .some([])
            case "every folder": rows[String(folder)] = .some(nil)
            default:
                rows[String(folder)] = .some(
                    Set(cells[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }))
            }
        }
        return rows
    }

    struct SourceFile {
        var folder: String
        var name: String
        /// The text without comments and string literals.
        var code: String
    }

    static func sourceFiles() throws -> [SourceFile] {
        var files: [SourceFile] = []
        for (directory, moduleFolder) in modules {
            let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
            while let file = enumerator?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                let parts = file.path.dropFirst(directory.path.count + 1).split(separator: "/")
                let folder = moduleFolder ?? (parts.count > 1 ? String(parts[0]) : "")
                files.append(
                    SourceFile(
                        folder: folder, name: file.lastPathComponent,
                        code: strippingCommentsAndStrings(try String(contentsOf: file, encoding: .utf8))))
            }
        }
        return files
    }

    /// Swift source without `//` and `/* */` comments and without the contents of string literals
    /// (single-line, multi-line and raw), so that names in prose do not count as uses.
    static func strippingCommentsAndStrings(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        func at(_ offset: Int, _ character: Character) -> Bool {
            index + offset < bytes.count && bytes[index + offset] == character.asciiValue!
        }
        while index < bytes.count {
            if at(0, "/") && at(1, "/") {
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
            } else if at(0, "/") && at(1, "*") {
                index += 2
                while index < bytes.count && !(at(0, "*") && at(1, "/")) { index += 1 }
                index += 2
            } else if at(0, "#") || at(0, "\"") {
                // A raw string's hashes, then the quotes: skip to the same quotes and hashes.
                var hashes = 0
                while at(hashes, "#") { hashes += 1 }
                guard index + hashes < bytes.count, bytes[index + hashes] == UInt8(ascii: "\"") else {
                    output.append(bytes[index])
                    index += 1
                    continue
                }
                index += hashes
                let quotes = at(0, "\"") && at(1, "\"") && at(2, "\"") ? 3 : 1
                index += quotes
                output.append(UInt8(ascii: "\""))
                while index < bytes.count {
                    if hashes == 0 && bytes[index] == UInt8(ascii: "\\") {
                        index += 2
                        continue
                    }
                    if (0..<quotes).allSatisfy({ at($0, "\"") }) && (0..<hashes).allSatisfy({ at(quotes + $0, "#") }) {
                        index += quotes + hashes
                        break
                    }
                    index += 1
                }
                output.append(UInt8(ascii: "\""))
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The capitalized identifiers in code.
    static func typeNames(in code: String) -> Set<String> {
        var names = Set<String>()
        var current: [UInt8] = []
        func isIdentifier(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        }
        for byte in code.utf8 + [0] {
            if isIdentifier(byte) {
                current.append(byte)
                continue
            }
            if let first = current.first, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") {
                names.insert(String(decoding: current, as: UTF8.self))
            }
            current = []
        }
        return names
    }

    /// The types a file declares at its top level.
    static func declaredTypes(in code: String) -> [String] {
        code.split(separator: "\n").compactMap { line in
            line.firstMatch(
                of:
                    /^(?:(?:public|internal|package|fileprivate|private|final|nonisolated|indirect|@\w+)\s+)*(?:struct|class|enum|actor|protocol|typealias)\s+([A-Z]\w*)/
            ).map { String($0.1) }
        }
    }

    /// The methods and properties a file's extensions add (`extension Type { func name(label:` at
    /// the extension's top level), each as ``memberKey(_:_:)``: a folder can add to a type it does
    /// not own (`Insights/` adds `saveTipUsage(derivedFrom:)` to `SyncStore`), and a use of that
    /// member is a use of the folder that added it.
    static func extensionMembers(in code: String) -> [String] {
        var keys: [String] = []
        var inExtension = false
        for line in code.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("extension ") {
                inExtension = true
            } else if line.hasPrefix("}") {
                inExtension = false
            } else if inExtension, let key = declaredMember(in: line, indent: "    ") {
                keys.append(key)
            }
        }
        return keys
    }

    /// The key of a member declared on `line` at `indent`: a property by its name, a method by its
    /// name and first argument label (`_` for none), so overloads with other labels are other members.
    static func declaredMember(in line: Substring, indent: String) -> String? {
        guard line.hasPrefix(indent), !line.dropFirst(indent.count).hasPrefix(" ") else { return nil }
        let text = line.dropFirst(indent.count)
        if let match = text.firstMatch(
            of: /^(?:(?:public|package|internal|static|nonisolated|mutating|@\w+)\s+)*var\s+([a-z]\w*)/)
        {
            return memberKey(String(match.1), nil)
        }
        guard
            let match = text.firstMatch(
                of:
                    /^(?:(?:public|package|internal|static|nonisolated|mutating|@\w+)\s+)*func\s+([a-z]\w*)(?:<[^>]*>)?\((\w*)/
            )
        else { return nil }
        return memberKey(String(match.1), match.2.isEmpty ? "_" : String(match.2))
    }

    /// `name` for a property, `name(label:` for a method.
    static func memberKey(_ name: String, _ label: String?) -> String {
        label.map { "\(name)(\($0):" } ?? name
    }

    /// The members code uses (after a `.`), as ``memberKey(_:_:)``: `.name(label: …` a method with
    /// that label, `.name(…` one without, `.name` a property.
    static func memberUses(in code: String) -> Set<String> {
        Set(
            code.matches(of: /\.([a-z]\w*)(\((?:(\w+):)?)?/).map { match in
                guard match.2 != nil else { return memberKey(String(match.1), nil) }
                return memberKey(String(match.1), match.3.map(String.init) ?? "_")
            })
    }

    /// Reading every server file is CPU work of seconds: it runs on a thread of its own, so the
    /// in-process servers of tests running beside it keep the cooperative pool (two threads on CI).
    @Test func everyServerFolderUsesOnlyWhatArchitectureMdAllows() async throws {
        for problem in try await offPool({ try Self.folderProblems() }) { Issue.record("\(problem)") }
    }

    /// What ``everyServerFolderUsesOnlyWhatArchitectureMdAllows()`` finds wrong, one line each.
    static func folderProblems() throws -> [String] {
        var problems: [String] = []
        let allowed = try Self.allowedFolders()
        let files = try Self.sourceFiles()
        var home: [String: String] = [:]
        for file in files {
            for type in Self.declaredTypes(in: file.code) { home[type] = file.folder }
        }
        // A member an extension adds counts only when one folder declares that name at all (as an
        // extension's member or anywhere else): a name several folders declare says nothing of whose it is.
        var memberHomes: [String: Set<String>] = [:]
        for file in files {
            for name in Self.extensionMembers(in: file.code) { memberHomes[name, default: []].insert(file.folder) }
        }
        for file in files {
            for line in file.code.split(separator: "\n") {
                let indent = String(line.prefix(while: { $0 == " " }))
                if let key = Self.declaredMember(in: line, indent: indent) { memberHomes[key]?.insert(file.folder) }
            }
        }
        let memberHome = memberHomes.compactMapValues { $0.count == 1 ? $0.first : nil }
        if memberHome["forEachChange(account:"] != "Ports" {
            problems.append(
                "the checker must see the members extensions add: \(memberHomes["forEachChange(account:"] ?? [])")
        }
        if home.count <= 100 { problems.append("found only \(home.count) server types") }
        for file in files where file.folder.isEmpty {
            problems.append("\(file.name) sits at the top of a server module: put it in the folder that holds it")
        }
        let folders = Set(files.map(\.folder)).subtracting([""])
        for folder in folders.sorted() where allowed[folder] == nil {
            problems.append("ARCHITECTURE.md has no row for the server folder \(folder)/")
        }
        if Set(allowed.keys) != folders { problems.append("rows for server folders that do not exist") }
        for file in files {
            guard case .some(.some(let may)) = allowed[file.folder] else { continue }
            for name in Self.typeNames(in: file.code).sorted() {
                guard let owner = home[name], owner != file.folder, !may.contains(owner) else { continue }
                problems.append(
                    "\(file.folder)/\(file.name) uses \(name) from \(owner)/, which ARCHITECTURE.md does not allow \(file.folder)/"
                )
            }
            for name in Self.memberUses(in: file.code).sorted() {
                guard let owner = memberHome[name], owner != file.folder, !may.contains(owner) else { continue }
                problems.append(
                    "\(file.folder)/\(file.name) uses .\(name)…, which \(owner)/ adds, and ARCHITECTURE.md does not allow \(file.folder)/ to use \(owner)/"
                )
            }
        }
        return problems
    }

    /// The checker sees what it must: a use in code counts, a name in a comment or a string does not.
    @Test func usesAreReadFromCodeNotFromCommentsOrStrings() {
        let code = Self.strippingCommentsAndStrings(
            """
            /// Uses ``Prose`` only in a comment.
            let a = Real() // Trailing
            let b = "Quoted \\(Interpolated)"
            let c = #"Raw "Quoted" text"#
            /* Block */ let d = Second.self
            """)
        #expect(Self.typeNames(in: code) == ["Real", "Second"])
        #expect(Self.declaredTypes(in: "public final class Top: Sendable {\n    struct Nested {}\n}") == ["Top"])
        // Members: a method by name and first label, a property by name.
        #expect(
            Self.memberUses(in: "a.save(derivedFrom: x); b.count; c.run()") == ["save(derivedFrom:", "count", "run(_:"])
        #expect(
            Self.extensionMembers(
                in: "extension Store {\n    public func save(derivedFrom changes: [Int]) {}\n    var size: Int { 0 }\n}"
            )
                == ["save(derivedFrom:", "size"])
    }
}
