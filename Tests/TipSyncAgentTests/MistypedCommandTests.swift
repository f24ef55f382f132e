import Foundation
import Testing
import TipSyncCore
import TipSyncTestSupport

/// A mistyped command does nothing but say so (issue 53, items 1 and 6): `tipsync-server acounts
/// create bob` started a server (`serve` is the default command), and the agent's refusal was four
/// lines of usage. Both now answer one line naming the closest command, exit status 64, and start
/// nothing.
@Suite(.timeLimit(.minutes(2))) struct MistypedCommandTests {
    @Test(
        arguments: [
            (["acounts", "create", "bob"], "unknown command 'acounts'; did you mean 'accounts'?"),
            (["admin-key", "create"], "unknown command 'admin-key'; did you mean 'admin-keys'?"),
            (["sreve"], "unknown command 'sreve'; did you mean 'serve'?"),
        ])
    func theServerRefusesAMistypedCommandInsteadOfServing(arguments: [String], expected: String) async throws {
        let directory = scratchDirectory()
        let result = try await runTool(
            "tipsync-server", arguments,
            environment: ["TIPSYNC_DATABASE": "sqlite:" + directory.appendingPathComponent("db.sqlite").path])
        #expect(result.status == 64)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("tipsync-server: \(expected) (commands: serve, migrate"))
        #expect(!result.stderr.contains("listening") && !result.stderr.contains("started"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("db.sqlite").path))
    }

    @Test func serveRefusesAStrayWordAfterIt() async throws {
        let directory = scratchDirectory()
        let result = try await runTool(
            "tipsync-server",
            ["serve", "acounts", "--database", "sqlite:" + directory.appendingPathComponent("x").path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("'acounts' is not one"))
        #expect(!result.stderr.contains("listening"))
    }

    @Test func theAgentRefusesAMistypedCommandInOneLine() async throws {
        let result = try await runTool("tipsync-agent", ["stauts"])
        #expect(result.status == 64)
        #expect(
            result.stderr
                == "tipsync-agent: unknown command 'stauts'; did you mean 'status'? (commands: init, catalog, donate, param, display, invalidate, reset-eligibility, status, sync, sync-status, run, watch, export-history)\n"
        )
    }

    @Test func aNegativeClockOffsetIsAValue() async throws {
        let store = scratchDirectory().appendingPathComponent("store").path
        let result = try await runTool("tipsync-agent", ["status", "--clock-offset", "-86400", "--store", store])
        // Parsed: the command runs, and says there is no store (not "Missing value").
        #expect(!result.stderr.contains("Missing value"))
        #expect(result.stderr.contains("init"))
    }

    @Test func suggestionsAreTheClosestNameOrNone() {
        #expect(NameSuggestion.closest(to: "acounts", among: ["serve", "accounts", "tokens"]) == "accounts")
        #expect(NameSuggestion.closest(to: "tokns", among: ["serve", "accounts", "tokens"]) == "tokens")
        #expect(NameSuggestion.closest(to: "xyzzy", among: ["serve", "accounts", "tokens"]) == nil)
        #expect(NameSuggestion.unknownCommand("--help", commands: ["serve"]) == nil)
        #expect(NameSuggestion.unknownCommand("serve", commands: ["serve"]) == nil)
    }
}

/// Errors that dumped internals (issue 53, item 3): `catalog put` of a missing file printed
/// `NSCocoaErrorDomain Code=260`, a port in use `bind(descriptor:ptr:bytes:) … (errno: 98)` without the
/// port. Each now names the file or the port and what to do, in one line, exit status 1.
@Suite(.timeLimit(.minutes(2))) struct OperatorErrorTests {
    @Test func aMissingCatalogFileIsNamed() async throws {
        let database = "sqlite:" + scratchDirectory().appendingPathComponent("db.sqlite").path
        #expect(try await runTool("tipsync-server", ["migrate", "--database", database]).status == 0)
        let result = try await runTool(
            "tipsync-server", ["catalog", "put", "/nonexistent.json", "--database", database])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: cannot read the catalog file '/nonexistent.json': no such file\n")
    }

    /// An unreachable PostgreSQL made `serve` sit silently — no error, no retry line, no port bound
    /// (issue 53, item 2). It now says what it waits for at each retry and gives up after
    /// `--database-wait`, naming the address (never the password) and what to do; a command does too.
    @Test func anUnreachablePostgreSQLIsRetriedAloudThenNamed() async throws {
        let port = FreePort.next()  // nothing listens there
        let url = "postgres://nobody:secret@127.0.0.1:\(port)/db"
        let serve = try await runTool("tipsync-server", ["serve", "--database", url, "--database-wait", "2"])
        #expect(serve.status == 1)
        let lines = serve.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines.contains { $0.contains("waiting for PostgreSQL") && $0.contains("error=connection refused") },
            "\(serve.stderr)")
        #expect(
            lines.last?.hasPrefix("Error: cannot reach PostgreSQL at 127.0.0.1:\(port) after 2 s (") == true
                && lines.last?.contains("last: connection refused") == true, "\(serve.stderr)")
        #expect(!serve.stderr.contains("secret"))
        let command = try await runTool(
            "tipsync-server", ["accounts", "create", "bob", "--database", url],
            environment: ["TIPSYNC_DATABASE_WAIT": "1"])
        #expect(command.status == 1)
        #expect(
            command.stderr.contains("Error: cannot reach PostgreSQL at 127.0.0.1:\(port) after 1 s"),
            "\(command.stderr)")
        // Issue 73, item 7: a one-shot command unasked waits a few seconds, not serve's minute.
        let unasked = try await runTool("tipsync-server", ["accounts", "list", "--database", url])
        #expect(unasked.status == 1)
        #expect(
            unasked.stderr.contains("Error: cannot reach PostgreSQL at 127.0.0.1:\(port) after 3 s"),
            "\(unasked.stderr)")
        let flag = try await runTool("tipsync-server", ["accounts", "list", "--database", url, "--database-wait", "1"])
        #expect(flag.stderr.contains("after 1 s"), "\(flag.stderr)")
    }

    @Test func aPortInUseIsNamedWithWhatToDo() async throws {
        let directory = scratchDirectory()
        let port = FreePort.next()
        let first = try Background(
            "tipsync-server",
            [
                "serve", "--http-port", String(port), "--database",
                "sqlite:" + directory.appendingPathComponent("a").path,
            ])
        #expect(await first.waitForLog("listening"))
        let second = try await runTool(
            "tipsync-server",
            [
                "serve", "--http-port", String(port), "--database",
                "sqlite:" + directory.appendingPathComponent("b").path,
            ])
        #expect(second.status == 1)
        let last = second.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(
            last
                == "Error: 127.0.0.1 port \(port) is in use (another tipsync-server?); stop it, or choose another port with --http-port or HTTP_PORT"
        )
        #expect(!second.stderr.contains("errno"))
        _ = await first.stop()
    }
}

/// Database settings that could not work said so in SQLite's or Foundation's words (issue 53, item 3).
@Suite struct DatabaseSettingErrorTests {
    @Test func anEmptyDatabaseSettingIsRefusedNotTheCurrentDirectory() async throws {
        let result = try await runTool("tipsync-server", ["accounts", "list"], environment: ["TIPSYNC_DATABASE": ""])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--database / TIPSYNC_DATABASE: empty; give sqlite:PATH"), "\(result.stderr)")
    }

    @Test func aDirectoryThatCannotBeCreatedIsNamed() async throws {
        let result = try await runTool("tipsync-server", ["migrate", "--database", "sqlite:/proc/nope/db.sqlite"])
        #expect(result.status == 1)
        let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("Error: cannot create the directory '/proc/nope' for the database ("), "\(last)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain"))
    }
}

/// Which TipSync an operator runs (issue 53, item 5): `--version` on both executables, the version in
/// `/health` and `/metrics`, all from ``TipSyncVersion`` — which protocol.md's latest revision and the
/// web client's package.json agree with.
@Suite(.timeLimit(.minutes(2))) struct VersionTests {
    @Test func bothExecutablesSayTheirVersion() async throws {
        for tool in ["tipsync-server", "tipsync-agent"] {
            let result = try await runTool(tool, ["--version"])
            #expect(result.status == 0 && result.stdout == TipSyncVersion.description + "\n", "\(tool): \(result)")
        }
    }

    @Test func theServerSaysItsVersionInHealthAndMetrics() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let health = try String(contentsOf: URL(string: server.url + "/health")!, encoding: .utf8)
        #expect(
            health
                == #"{"status":"ok","version":"\#(TipSyncVersion.release)","protocol":"\#(TipSyncVersion.protocolRevision)"}"#
        )
        let metrics = try String(contentsOf: URL(string: server.url + "/metrics")!, encoding: .utf8)
        #expect(
            metrics.contains(
                #"tipsync_build_info{version="\#(TipSyncVersion.release)",protocol="\#(TipSyncVersion.protocolRevision)"} 1"#
            ), "\(metrics.split(separator: "\n").filter { $0.contains("build_info") })")
    }

    @Test func theDocumentsAgreeWithTheVersion() throws {
        let protocolText = try String(contentsOf: packageRoot.appendingPathComponent("protocol.md"), encoding: .utf8)
        let revisions = protocolText.matches(of: /Revision (2\.\d+)/).map { String($0.1) }
        #expect(
            revisions.max { $0.compare($1, options: .numeric) == .orderedAscending } == TipSyncVersion.protocolRevision)
        // Every `/health` answer the documents show names the current revision (protocol.md's own
        // said 2.6 after 2.7 had landed).
        for document in ["protocol.md", "README.md", "deploy/README.md"] {
            let text = try String(contentsOf: packageRoot.appendingPathComponent(document), encoding: .utf8)
            let shown = text.matches(of: /"protocol":"([0-9.]+)"/).map { String($0.1) }
            #expect(
                !shown.isEmpty && shown.allSatisfy { $0 == TipSyncVersion.protocolRevision }, "\(document): \(shown)")
        }
        let package =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: packageRoot.appendingPathComponent("clients/web/package.json")))
            as? [String: Any]
        #expect(package?["version"] as? String == TipSyncVersion.release)
    }
}

extension OperatorErrorTests {
    /// `migrate` said only "schema is up to date", and a new SQLite database was readable by everyone
    /// on the machine (issue 53, item 5): it names the schema now, and the database, its write-ahead
    /// log and shared memory are the owner's alone (0600), as the server runs.
    @Test func migrateNamesTheSchemaAndTheDatabaseIsTheOwnersOnly() async throws {
        let directory = scratchDirectory()
        let path = directory.appendingPathComponent("fresh.sqlite").path
        let migrated = try await runTool("tipsync-server", ["migrate", "--database", "sqlite:" + path])
        #expect(migrated.status == 0)
        #expect(migrated.stdout.hasPrefix("schema is up to date: SQLite schema "), "\(migrated.stdout)")
        let port = FreePort.next()
        let server = try Background(
            "tipsync-server", ["serve", "--http-port", String(port), "--database", "sqlite:" + path])
        #expect(await server.waitForLog("listening"))
        for file in [path, path + "-wal", path + "-shm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
            #expect(mode == 0o600, "\(file): \(String(mode, radix: 8))")
        }
        _ = await server.stop()
    }
}
