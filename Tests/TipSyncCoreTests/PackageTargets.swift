import Foundation
import TipSyncTestSupport

/// The package's targets as SwiftPM reads `Package.swift` (`swift package describe --type json`):
/// each one's name, kind, directory and the package's own targets it depends on.
struct PackageTargets: Sendable {
    struct Target: Sendable, Decodable {
        var name: String
        var type: String
        var path: String
        var dependencies: [String]

        enum CodingKeys: String, CodingKey {
            case name, type, path
            case dependencies = "target_dependencies"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            type = try container.decode(String.self, forKey: .type)
            path = try container.decode(String.self, forKey: .path)
            dependencies = try container.decodeIfPresent([String].self, forKey: .dependencies) ?? []
        }
    }

    private struct Description: Decodable {
        var targets: [Target]
    }

    var targets: [Target]

    /// Every target that is not a test target.
    var modules: [Target] { targets.filter { $0.type != "test" } }

    /// Runs `swift package describe` in the package's root. `--ignore-lock`: the suite itself runs
    /// under `swift test`, which holds the build directory's lock; describing reads the manifest only.
    static func describe() async throws -> PackageTargets {
        let result = try await ChildProcess.run(
            "/usr/bin/env", ["swift", "package", "--ignore-lock", "describe", "--type", "json"],
            directory: ArchitectureTests.root.path)
        guard result.status == 0, let start = result.stdout.firstIndex(of: "{") else {
            throw ChildProcessError(description: "swift package describe failed: \(result.stderr)")
        }
        let description = try JSONDecoder().decode(Description.self, from: Data(result.stdout[start...].utf8))
        return PackageTargets(targets: description.targets)
    }
}
