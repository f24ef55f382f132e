import Foundation
import Testing
import TipSyncTestSupport

/// The library apps embed has a written face: `docs/swift-public-api.md` lists, per type, the
/// members `TipSync` declares `public`, and this test fails when the sources and the list differ, so
/// the face never grows (or shrinks) unnoticed. What only the package uses (the replica's sync face,
/// ``SyncedReplica``) is `package`, outside the list.
@Suite struct PublicAPITests {
    static let listFile = ArchitectureTests.root.appendingPathComponent("docs/swift-public-api.md")

    /// The public declarations of the Swift files under `directory`: each public type by its
    /// qualified name (`Tips.Event`), with the names of its public members (methods and properties by
    /// name, overloads once, `init`, `subscript`); top-level public functions under `(global)`.
    static func publicAPI(under directory: URL) throws -> [String: Set<String>] {
        var api: [String: Set<String>] = [:]
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let code = ServerFolderTests.strippingCommentsAndStrings(try String(contentsOf: file, encoding: .utf8))
            for (type, member) in publicDeclarations(in: code) {
                if let member { api[type, default: []].insert(member) } else if api[type] == nil { api[type] = [] }
            }
        }
        return api
    }

    /// `(type, member)` for each public member, `(type, nil)` for each public type. A scope (a type or
    /// an extension) opened at an indent holds the declarations one level (4 spaces) deeper.
    static func publicDeclarations(in code: String) -> [(String, String?)] {
        var found: [(String, String?)] = []
        var scopes: [(indent: Int, name: String, isPublic: Bool)] = []
        for line in code.split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix(while: { $0 == " " }).count
            let text = line.dropFirst(indent)
            guard !text.isEmpty else { continue }
            while let last = scopes.last, last.indent >= indent { scopes.removeLast() }
            // Most lines declare nothing: skip them before any pattern is tried.
            guard
                ["public", "open ", "extension ", "class ", "struct ", "enum ", "actor ", "protocol "].contains(
                    where: { text.contains($0) })
            else { continue }
            // The scope the line declares in: "" at the top level, nil when nested deeper or in a type
            // that is not public (its members are not either).
            let outer =
                scopes.last.map { $0.indent + 4 == indent && $0.isPublic ? $0.name : nil } ?? (indent == 0 ? "" : nil)
            if let match = text.firstMatch(of: /^extension\s+([A-Za-z_][\w.]*)/) {
                if indent == 0 { scopes.append((indent, String(match.1), true)) }
                continue
            }
            let isPublic = text.contains(/^(?:@[\w()., :"]+\s+)*(?:\w+\s+)*?(?:public|open)\s/)
            if let match = text.firstMatch(
                of:
                    /^(?:@[\w()., :"]+\s+)*(?:(?:public|open|package|internal|private|fileprivate|final|indirect)\s+)*(?:class|struct|enum|actor|protocol)\s+([A-Za-z_]\w*)/
            ) {
                let name = outer.map { $0.isEmpty ? String(match.1) : "\($0).\(match.1)" } ?? String(match.1)
                scopes.append((indent, name, isPublic && outer != nil))
                if isPublic { found.append((name, nil)) }
                continue
            }
            guard isPublic, let outer else { continue }
            if let match = text.firstMatch(of: /\b(?:func|var|let|typealias|case)\s+([A-Za-z_`][\w`]*)/) {
                found.append((outer.isEmpty ? "(global)" : outer, String(match.1)))
            } else if text.contains(/\binit[?!]?[(<]/) {
                found.append((outer.isEmpty ? "(global)" : outer, "init"))
            } else if text.contains(/\bsubscript[(<]/) {
                found.append((outer, "subscript"))
            }
        }
        return found
    }

    /// The list as written: one line per type, `Type: member, member` (or `Type:` for none).
    static func writtenList() throws -> [String: Set<String>] {
        let text = try String(contentsOf: listFile, encoding: .utf8)
        let block = text.split(separator: "```", maxSplits: 2, omittingEmptySubsequences: false)
        try #require(block.count == 3, "the list is a fenced block")
        var list: [String: Set<String>] = [:]
        for line in block[1].split(separator: "\n") {
            let sides = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            try #require(sides.count == 2, "a line of the list is `Type: members`: \(line)")
            list[String(sides[0])] = Set(
                sides[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return list
    }

    static func rendered(_ api: [String: Set<String>]) -> String {
        api.keys.sorted().map { type in
            let members = api[type, default: []].sorted()
            return members.isEmpty ? "\(type):" : "\(type): \(members.joined(separator: ", "))"
        }.joined(separator: "\n")
    }

    @Test func theLibrarysPublicFaceIsTheWrittenList() async throws {
        // Reading every file: on a thread of its own, off the cooperative pool other tests' servers use.
        let api = try await offPool {
            try Self.publicAPI(under: ArchitectureTests.root.appendingPathComponent("Sources/TipSync"))
        }
        let written = try Self.writtenList()
        #expect(
            written == api,
            """
            docs/swift-public-api.md and Sources/TipSync differ; the sources declare:
            \(Self.rendered(api))
            """)
        // The replica's sync face is the package's own.
        let replica = try #require(api["TipsReplica"])
        for member in ["outbox", "updateSyncProgress", "applyRemote", "setAsideUnsentChange", "continueDeviceLog"] {
            #expect(!replica.contains(member), "TipsReplica.\(member) is public")
        }
        #expect(api["SyncedReplica"] == nil)
    }

    /// The reader sees public types (nested ones by their qualified name), members in the type and in
    /// extensions, and not what is internal, package, in a comment or in a type that is not public.
    @Test func theReaderSeesPublicDeclarationsOnly() {
        let code = ServerFolderTests.strippingCommentsAndStrings(
            """
            public final class Top: Sendable {
                public let name: String
                package let hidden: Int
                /// public var inComment: Int
                public struct Inner {
                    public var depth: Int
                    var internalDepth: Int
                }
                public init(name: String) {}
            }
            extension Top {
                @discardableResult
                public func run(_ x: Int) -> Int { x }
                func helper() {}
            }
            public func global() {}
            struct Hidden {
                public var notReally: Int
            }
            """)
        let found = Self.publicDeclarations(in: code).map { "\($0.0)|\($0.1 ?? "")" }
        #expect(
            found == ["Top|", "Top|name", "Top.Inner|", "Top.Inner|depth", "Top|init", "Top|run", "(global)|global"])
    }
}
