public import Foundation

/// The language-neutral conformance corpus (`conformance/`, protocol.md §14) the reference runners
/// read: one folder per kind of vector.
public enum ConformanceCorpus {
    /// `conformance/<kind>` in this checkout.
    public static func directory(_ kind: String) -> URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("conformance").appendingPathComponent(kind)
    }

    /// The names of the vectors (`*.json`) of a kind, sorted.
    public static func vectorNames(_ kind: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory(kind).path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }
}
