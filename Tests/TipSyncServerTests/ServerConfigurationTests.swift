import Foundation
import Testing
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Settings are read once (`ServerConfiguration(reading:)`); flags, environment and an environment file
/// are layered by swift-configuration; the documents name exactly the settings the server reads.
@Suite struct ServerConfigurationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func defaultsAreTheDocumentedOnes() throws {
        let configuration = ServerConfiguration()
        #expect(configuration.maxClockSkew == .seconds(300))
        #expect(configuration.longPollGather == .milliseconds(10))
        #expect(configuration.httpPort == 8080)
        #expect(configuration.database == .sqlite(path: "./tipsync-data/server.sqlite"))
        let skew = try #require(ServerConfiguration.settings.first { $0.key == "tipsync.maxClockSkew" })
        #expect(skew.flag == "--max-clock-skew")
        #expect(skew.environmentVariable == "TIPSYNC_MAX_CLOCK_SKEW")
        #expect(skew.defaultValue == "300")
        #expect(skew.unit == "seconds")
        let keys = ServerConfiguration.settings.map(\.key)
        #expect(Set(keys).count == keys.count, "a key read twice")
    }

    @Test func aFlagWinsOverTheEnvironmentWhichWinsOverTheFile() async throws {
        let file = Scratch.path("settings", pathExtension: "env")
        defer { try? FileManager.default.removeItem(at: file) }
        try """
        # a comment
        TIPSYNC_MAX_BATCH=10
        TIPSYNC_HEARTBEAT=7.5
        TIPSYNC_MAX_WAIT=5
        TIPSYNC_CORS_ORIGINS=https://a.example, https://b.example
        """.write(to: file, atomically: true, encoding: .utf8)
        let configuration = try await ServerConfiguration.load(
            arguments: ["--max-batch", "30", "--console", "--rate-changes-burst=40"],
            environment: ["TIPSYNC_MAX_BATCH": "20", "TIPSYNC_HEARTBEAT": "2", "TIPSYNC_CONFIG_FILE": file.path])
        #expect(configuration.maxBatch == 30)
        #expect(configuration.heartbeat == .seconds(2))
        #expect(configuration.maxWait == .seconds(5))
        #expect(configuration.console)
        #expect(configuration.changeRate.burst == 40)
        #expect(configuration.corsOrigins == ["https://a.example", "https://b.example"])
        #expect(configuration.configFile == file.path)
        #expect(configuration.maxPullLimit == 5000)
    }

    /// Every spelling the error message names is accepted, as a flag's value and from the
    /// environment (`--console 1` and `--console=yes` were refused naming 1 and yes as accepted).
    @Test func everyBooleanSpellingTheErrorNamesIsAccepted() async throws {
        for (text, value) in [
            ("1", true), ("0", false), ("true", true), ("false", false), ("yes", true), ("no", false), ("on", true),
            ("off", false), ("YES", true),
        ] {
            let flag = try await ServerConfiguration.load(arguments: ["--console=\(text)"], environment: [:])
            #expect(flag.console == value, "--console=\(text)")
            let spaced = try await ServerConfiguration.load(arguments: ["--log-access", text], environment: [:])
            #expect(spaced.accessLog == value, "--log-access \(text)")
            let variable = try await ServerConfiguration.load(arguments: [], environment: ["TIPSYNC_CONSOLE": text])
            #expect(variable.console == value, "TIPSYNC_CONSOLE=\(text)")
        }
        #expect(try await ServerConfiguration.load(arguments: ["--console"], environment: [:]).console)
    }

    @Test func badValuesAreRefusedNamingTheFlagAndTheVariable() async throws {
        let cases: [([String], [String: String], String)] = [
            (["--max-batch", "ten"], [:], "--max-batch / TIPSYNC_MAX_BATCH: 'ten' is not an integer"),
            ([], ["TIPSYNC_HEARTBEAT": "soon"], "--heartbeat / TIPSYNC_HEARTBEAT: 'soon' is not a number of seconds"),
            (
                [], ["TIPSYNC_CONSOLE": "maybe"],
                "--console / TIPSYNC_CONSOLE: 'maybe' is not 1, 0, true, false, yes or no"
            ),
            (["--max-batch", "-3"], [:], "--max-batch / TIPSYNC_MAX_BATCH: must be at least 1, found -3"),
            // A port beyond 65535 was accepted and bound modulo 65536 (187011371 listened on 37163)
            // while the log named the port asked for.
            (["--http-port", "187011371"], [:], "--http-port / HTTP_PORT: must be at most 65535, found 187011371"),
            ([], ["HTTP_PORT": "-1"], "--http-port / HTTP_PORT: must be at least 0, found -1"),
            ([], ["TIPSYNC_RATE_REQUESTS": "-1"], "--rate-requests / TIPSYNC_RATE_REQUESTS: must be a number ≥ 0"),
            ([], ["LOG_LEVEL": "loud"], "--log-level / LOG_LEVEL: 'loud' is not a valid value"),
            ([], ["TIPSYNC_DATABASE": "mysql://x"], "--database / TIPSYNC_DATABASE: unsupported database"),
            (
                ["--rate-changes-burst", "5"], [:],
                "--rate-changes-burst / TIPSYNC_RATE_CHANGES_BURST: must be at least the largest batch"
            ),
            (["--max-bach", "5"], [:], "unknown option '--max-bach'"),
            // Malformed CORS origins were accepted silently at start (issue 59, item 6): an origin is
            // scheme://host[:port], exactly as a browser sends it, or *.
            (
                ["--cors-origins", "app.example.com"], [:],
                "--cors-origins / TIPSYNC_CORS_ORIGINS: 'app.example.com' is not an origin"
            ),
            (
                ["--cors-origins", "https://app.example.com/"], [:],
                "--cors-origins / TIPSYNC_CORS_ORIGINS: 'https://app.example.com/' is not an origin"
            ),
            (
                [], ["TIPSYNC_CORS_ORIGINS": "https://a.example, https://b.example:8443/path"],
                "--cors-origins / TIPSYNC_CORS_ORIGINS: 'https://b.example:8443/path' is not an origin"
            ),
            (
                ["--trusted-proxies", "proxy.internal"], [:],
                "--trusted-proxies / TIPSYNC_TRUSTED_PROXIES: 'proxy.internal' is not an IP address or 'private'"
            ),
            (
                [], ["TIPSYNC_CONFIG_FILE": "/nonexistent/tipsync.env"],
                "--config-file / TIPSYNC_CONFIG_FILE: cannot read"
            ),
        ]
        for (arguments, environment, message) in cases {
            await #expect(throws: SettingError.self, "\(arguments) \(environment)") {
                try await ServerConfiguration.load(arguments: arguments, environment: environment)
            }
            do {
                _ = try await ServerConfiguration.load(arguments: arguments, environment: environment)
            } catch {
                #expect("\(error)".hasPrefix(message), "\(error)")
            }
        }
    }

    /// protocol.md §12's limits are the server's defaults: for each row naming flags, the numbers
    /// of its default (before any parenthesis or semicolon; MiB and KiB as bytes) are those flags'
    /// defaults, in order, and the environment variables it names are theirs.
    @Test func protocolLimitsAreTheServersDefaults() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("protocol.md"), encoding: .utf8)
        let section =
            try #require(text.components(separatedBy: "## 12. Limits (defaults)").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        let settings = Dictionary(ServerConfiguration.settings.map { ($0.flag, $0) }) { first, _ in first }
        var checked = 0
        for line in section.split(separator: "\n") where line.hasPrefix("| ") && line.contains("`--") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let flags = cells[2].matches(of: /`(--[a-z-]+)`/).map { String($0.1) }
            let variables = cells[2].matches(of: /`([A-Z][A-Z_]+)`/).map { String($0.1) }
            let rowSettings = try flags.map { flag in try #require(settings[flag], "protocol.md names \(flag)") }
            #expect(variables == rowSettings.map(\.environmentVariable), "\(line)")
            let stated = String(cells[1].prefix { $0 != "(" && $0 != ";" })
            let numbers = stated.matches(of: /([0-9][0-9,]*(?:\.[0-9]+)?)\s*(MiB|KiB)?/).map { match -> Double in
                let value = Double(match.1.replacingOccurrences(of: ",", with: "")) ?? .nan
                return value * (match.2 == "MiB" ? 1_048_576 : match.2 == "KiB" ? 1024 : 1)
            }
            if numbers.isEmpty {
                #expect(rowSettings.map(\.defaultValue) == [stated.trimmingCharacters(in: .whitespaces)], "\(line)")
            } else {
                #expect(numbers == rowSettings.map { Double($0.defaultValue) ?? .nan }, "\(line)")
            }
            checked += 1
        }
        #expect(checked >= 15)
    }

    /// deploy/README.md's settings table is the one `tipsync-server settings` prints.
    @Test func deployReadmeShowsExactlyTheSettings() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("deploy/README.md"), encoding: .utf8)
        #expect(readme.contains(ServerConfiguration.settingsTable + "\n"), "regenerate: tipsync-server settings")
    }

    /// deploy/tipsync-server.env names every setting (set or commented out) and nothing else, and as
    /// a `--config-file` it is a valid configuration.
    @Test func theEnvironmentFileNamesExactlyTheSettings() async throws {
        let path = Self.root.appendingPathComponent("deploy/tipsync-server.env").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var named = Set<String>()
        for line in text.split(separator: "\n") {
            guard let match = line.wholeMatch(of: /#?([A-Z][A-Z0-9_]*)=.*/) else { continue }
            named.insert(String(match.1))
        }
        // A file cannot name itself as the file to read.
        let expected = Set(ServerConfiguration.settings.map(\.environmentVariable)).subtracting(["TIPSYNC_CONFIG_FILE"])
        #expect(named.subtracting(expected).isEmpty, "not settings: \(named.subtracting(expected))")
        #expect(expected.subtracting(named).isEmpty, "missing: \(expected.subtracting(named))")
        let configuration = try await ServerConfiguration.load(arguments: ["--config-file", path], environment: [:])
        #expect(configuration.database == .sqlite(path: "/var/lib/tipsync/server.sqlite"))
        #expect(configuration.maxBatch == ServerConfiguration().maxBatch)
    }

    /// The README points operators to the one table instead of keeping its own.
    @Test func theReadmeKeepsNoSecondTable() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(!readme.contains("| `--max-batch` |"))
        #expect(readme.contains("deploy/README.md#settings"))
    }
}
