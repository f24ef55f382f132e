public import ArgumentParser
import Foundation
import Logging
import TipSync
import TipSyncAgent
public import TipSyncCore

/// `tipsync-agent`: one device's tips replica and sync as a command-line tool and daemon.
@main
struct TipSyncAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tipsync-agent",
        abstract: "A device's TipSync replica: ask whether a tip should show, record displays and dismissals, sync.",
        version: TipSyncVersion.description,
        subcommands: [
            Init.self, CatalogCommand.self, Donate.self, ParamCommand.self, Display.self, Invalidate.self,
            ResetEligibility.self, Status.self, Sync.self, SyncStatusCommand.self, Run.self, Watch.self,
            ExportHistory.self,
        ])

    /// Runs the command (a failure exits with its message and status, as `ArgumentParser` does),
    /// then closes the store and ends the process without freeing the replica (``OpenedAgents``).
    static func main() async {
        // A first word that names no command: one line with the closest command, exit status 64.
        let commands = configuration.subcommands.map { $0._commandName }
        if let word = CommandLine.arguments.dropFirst().first,
            let message = NameSuggestion.unknownCommand(word, commands: commands)
        {
            FileHandle.standardError.write(Data("tipsync-agent: \(message)\n".utf8))
            Foundation.exit(64)
        }
        await main(nil)
        OpenedAgents.closeAll()
        Foundation.exit(0)
    }
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    /// `--store` ↔ `TIPSYNC_STORE` (default `$XDG_DATA_HOME/tipsync`, else `~/.local/share/tipsync`).
    @Option(name: .long, help: "The agent's store directory (env TIPSYNC_STORE).")
    var store: String?

    /// `--clock-offset` ↔ `TIPSYNC_CLOCK_OFFSET`: seconds added to the system clock.
    @Option(
        name: .long, parsing: .unconditional,
        help: "Seconds to add to the system clock, to simulate a skewed device (env TIPSYNC_CLOCK_OFFSET).")
    var clockOffset: Double?

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    var agentStore: AgentStore {
        store.map { AgentStore(directory: URL(fileURLWithPath: $0)) }
            ?? AgentStore(directory: AgentStore.defaultDirectory(environment: environment))
    }

    func offset() throws -> Double {
        if let clockOffset { return clockOffset }
        guard let text = environment["TIPSYNC_CLOCK_OFFSET"], !text.isEmpty else { return 0 }
        guard let value = Double(text) else {
            throw AgentError(
                .badOption, message: "TIPSYNC_CLOCK_OFFSET must be a number of seconds, got '\(text)'")
        }
        return value
    }

    /// After a write: a daemon running on this store reloads it and pushes at once (its local API's
    /// `reload`); nothing happens when none runs.
    func tellDaemon() {
        guard let client = try? LocalAPIClient(path: agentStore.socketPath) else { return }
        _ = try? client.request(#"{"op":"reload"}"#)
    }

    /// The agent on the store, kept until the process ends (``OpenedAgents``).
    func openAgent() throws -> Agent {
        OpenedAgents.keep(try Agent(store: agentStore, clockOffset: try offset(), environment: environment))
    }
}

/// Parses a JSON argument with a clear error.
func parseJSON(_ text: String, what: String) throws -> JSONValue {
    do { return try JSONValue(parsing: text) } catch {
        throw AgentError(
            .badJson,
            message: "\(what) is not valid JSON: \(text) (strings need JSON quotes, e.g. '\"pro\"')")
    }
}

/// Runs a command body; every failure becomes one line on stderr and exit status 1.
func reporting(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        let line = AgentError.describe(error)
        FileHandle.standardError.write(Data("tipsync-agent: \(line)\n".utf8))
        throw ExitCode(1)
    }
}

extension AgentError {
    static func describe(_ error: any Error) -> String {
        (error as? AgentError)?.message ?? String(describing: error).replacingOccurrences(of: "\n", with: " ")
    }
}

struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the store: which server, which token, which device.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The sync server's URL, e.g. http://127.0.0.1:8080.") var server: String
    @Option(help: "This device's token (from `tipsync-server tokens create` or the admin API).") var token: String?
    @Option(
        help:
            "A shell command printing a fresh JWT from your identity provider; run again when the server says it expired."
    )
    var tokenCommand: String?
    @Option(help: "This device's name (the one its token was created for, or the JWT's 'device' claim).")
    var device: String
    @Flag(
        help:
            "Follow the server's catalog (GET /v1/catalog): each one uploaded replaces this store's catalog, at once while 'run' is up."
    )
    var followCatalog = false
    @Option(
        help:
            "Seconds a store that has never synced holds back tips that would be available, waiting for its first pull (default 5; 0: no hold)."
    )
    var firstSyncTimeout: Double?
    @Option(help: "This device's platform for targeting (ios, macos, web, linux…; default: the one it runs on).")
    var platform: String?
    @Option(help: "The app's version for targeting, e.g. 2.4.1.") var appVersion: String?
    @Option(help: "The locale for targeting, a BCP 47 tag such as fr-CA (default: the system's).") var locale: String?

    func validate() throws {
        guard (token == nil) != (tokenCommand == nil) else {
            throw ValidationError("give exactly one of --token and --token-command")
        }
        if let firstSyncTimeout, !(0...86_400).contains(firstSyncTimeout) {
            throw ValidationError("--first-sync-timeout must be 0 to 86400 seconds")
        }
    }

    func run() async throws {
        try await reporting {
            guard let url = URL(string: server) else {
                throw AgentError(.badOption, message: "--server is not a URL: \(server)")
            }
            let store = global.agentStore
            var configuration = AgentConfiguration(
                server: url, token: token ?? "", device: device, tokenCommand: tokenCommand,
                followsServerCatalog: followCatalog, firstSyncTimeout: firstSyncTimeout)
            configuration.platform = platform
            configuration.appVersion = appVersion
            configuration.locale = locale
            // A refused token writes nothing; an unreachable server does not stop a device being set up.
            let check = try await configuration.checkCredential()
            try store.initialize(configuration)
            print("initialized \(store.directory.path) for device '\(device)'")
            if case .unchecked(let why) = check {
                FileHandle.standardError.write(
                    Data("tipsync-agent: the token is not checked yet (\(why)); `tipsync-agent sync` will say\n".utf8))
            }
        }
    }
}

struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog", abstract: "Manage the catalog of tips, parameters and events.", subcommands: [Load.self]
    )

    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a catalog file and make it this device's catalog.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The catalog JSON file (see Examples/catalog.json).") var file: String

        func run() async throws {
            try await reporting {
                let catalog = try global.openAgent().loadCatalog(from: URL(fileURLWithPath: file))
                global.tellDaemon()
                print(
                    "loaded \(catalog.tips.count) tips, \(catalog.parameters.count) parameters, \(catalog.events.count) events"
                )
            }
        }
    }
}

struct Donate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Donate to an event (counted by rules on every device).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The event id.") var event: String
    @Option(help: "The donation's info as JSON, e.g. '{\"yardID\":7}'.") var value: String?

    func run() async throws {
        try await reporting {
            let info = try value.map { try parseJSON($0, what: "--value") }
            try global.openAgent().donate(event: event, value: info)
            global.tellDaemon()
        }
    }
}

struct ParamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "param", abstract: "Read or write a parameter.", subcommands: [Set.self, Get.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a parameter to a JSON value.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The parameter id.") var name: String
        /// Every input no option claims, so a negative number (`-5`, `-1.5e3`) is a value, not an
        /// unknown option; exactly one is allowed.
        @Argument(
            parsing: .allUnrecognized,
            help: "The value as JSON: true, 3, -2.5, '\"pro\"' (a negative number needs no '--').")
        var value: [String]

        func validate() throws {
            guard value.count == 1 else {
                throw ValidationError(
                    value.isEmpty
                        ? "Missing expected argument '<value>'"
                        : "expected one JSON value, got \(value.count): \(value.joined(separator: " "))")
            }
        }

        func run() async throws {
            try await reporting {
                let parsed = try parseJSON(value[0], what: "the value")
                try global.openAgent().setParameter(name, to: parsed)
                global.tellDaemon()
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a parameter's value as JSON.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The parameter id.") var name: String

        func run() async throws {
            try await reporting { print(try global.openAgent().parameter(name).canonicalText) }
        }
    }
}

struct Display: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Record that a tip was shown.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The tip id.") var tip: String
    @Option(help: "Seconds it was on screen.") var duration: Double = 0

    func run() async throws {
        try await reporting {
            try global.openAgent().display(tip: tip, duration: duration)
            global.tellDaemon()
        }
    }
}

/// `--reason` takes what an app may write; the other two reasons are the engine's own (a tip that
/// reached its display count or duration), never passed by hand.
extension InvalidationReason: ExpressibleByArgument {
    public static var allValueStrings: [String] {
        [InvalidationReason.actionPerformed, .tipClosed].map(\.rawValue)
    }
}

struct Invalidate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Invalidate a tip on every device.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The tip id.") var tip: String
    @Option(help: "actionPerformed or tipClosed.") var reason: InvalidationReason = .tipClosed

    func validate() throws {
        guard reason == .tipClosed || reason == .actionPerformed else {
            throw ValidationError("--reason must be actionPerformed or tipClosed")
        }
    }

    func run() async throws {
        try await reporting {
            try global.openAgent().invalidate(tip: tip, reason: reason)
            global.tellDaemon()
        }
    }
}

struct ResetEligibility: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-eligibility", abstract: "Make a tip eligible again and restart its display counts.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The tip id.") var tip: String

    func run() async throws {
        try await reporting {
            try global.openAgent().resetEligibility(tip: tip)
            global.tellDaemon()
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Whether each tip (or one) should show now.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "One tip id (default: every catalog tip).") var tip: String?
    @Flag(help: "Print {\"tips\":[…]} JSON.") var json = false
    @Flag(help: "Say why: the step that decides each status and what it read (protocol.md §13.9).") var why = false

    func run() async throws {
        try await reporting {
            if why {
                let explanations = try global.openAgent().explanations(tip: tip)
                if json {
                    print(#"{"tips":["# + explanations.map(\.json.canonicalText).joined(separator: ",") + "]}")
                } else {
                    for explanation in explanations { print(explanation.description) }
                }
                return
            }
            let report = try daemonReport() ?? global.openAgent().status(tip: tip)
            if json {
                print(report.jsonLine)
            } else {
                for tip in report.tips {
                    print("\(tip.id)\t\(tip.statusText)\tdisplays: \(tip.displayCount)")
                }
            }
        }
    }
}

extension Status {
    /// When `run` is up on this store (and no clock offset is asked for), its in-memory replica
    /// answers over the local socket: no store to open, no catalog to decode.
    func daemonReport() throws -> StatusReport? {
        guard global.clockOffset == nil, global.environment["TIPSYNC_CLOCK_OFFSET"] == nil,
            let client = try? LocalAPIClient(path: global.agentStore.socketPath)
        else { return nil }
        var request = #"{"op":"status""#
        if let tip { request += #","tip":\#(JSONValue.string(tip).canonicalText)"# }
        guard let line = try? client.request(request + "}") else { return nil }
        struct Reply: Decodable {
            var ok: Bool
            var tips: [TipReport]?
            var error: AgentError?
        }
        let reply = try JSONDecoder().decode(Reply.self, from: Data(line.utf8))
        if let error = reply.error { throw error }
        return reply.tips.map(StatusReport.init(tips:))
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "One push + pull round with the server.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reporting { try await global.openAgent().syncOnce() }
    }
}

struct SyncStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-status",
        abstract: "Where the running daemon's sync stands: connected, connecting, offline, refused or stopped.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print the status as JSON (protocol.md §17.4).") var json = false

    func run() async throws {
        try await reporting {
            guard let client = try? LocalAPIClient(path: global.agentStore.socketPath) else {
                throw AgentError(
                    .noSync,
                    message:
                        "no daemon runs on this store (\(global.agentStore.directory.path)): nothing syncs; start `tipsync-agent run`"
                )
            }
            let line = try client.request(#"{"op":"sync-status"}"#)
            let reply = try JSONParser.parse(Data(line.utf8))
            func text(_ value: JSONValue?) -> String? {
                if case .string(let text)? = value { text } else { nil }
            }
            guard reply["ok"] == .bool(true), let status = reply["sync"] else {
                throw AgentError(.noSync, message: text(reply["error"]?["message"]) ?? line)
            }
            if json {
                print(status.canonicalText)
            } else {
                var words = [text(status["state"]) ?? "unknown"]
                if let code = text(status["code"]), status["state"] != .string("connected") {
                    words.append("(\(code)): \(text(status["message"]) ?? "")")
                }
                if let next = status["nextAttemptAt"]?.number {
                    words.append("next attempt \(Date(timeIntervalSince1970: next / 1000).formatted(.iso8601))")
                }
                words.append("\(status["pendingChanges"]?.number.map { Int($0) } ?? 0) change(s) waiting")
                if let last = status["lastSyncedAt"]?.number {
                    words.append("last synced \(Date(timeIntervalSince1970: last / 1000).formatted(.iso8601))")
                }
                print(words.joined(separator: "; "))
            }
        }
    }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run as a daemon: live sync and the local API socket, until SIGTERM.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "trace, debug, info, notice, warning, error or critical (env LOG_LEVEL).")
    var logLevel: String?

    func run() async throws {
        try await reporting {
            let agent = try global.openAgent()
            let levelText = logLevel ?? global.environment["LOG_LEVEL"] ?? "info"
            guard let level = Logger.Level(rawValue: levelText) else {
                throw AgentError(.badOption, message: "unknown log level '\(levelText)'")
            }
            // Logging is bootstrapped once, here in the executable.
            LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
            var logger = Logger(label: "tipsync-agent")
            logger.logLevel = level
            try await AgentDaemon(agent: agent, logger: logger).run()
        }
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print each tip's status (or one's) as a JSON line, then a line whenever it changes.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "One tip id (default: every catalog tip).") var tip: String?
    @Option(help: "Exit (status 0) once a watched tip reports this status: available, pending or invalidated.")
    var until: String?
    @Option(help: "Give up (status 1) after this many seconds.") var timeout: Double?

    func validate() throws {
        if let until, !["available", "pending", "invalidated"].contains(until) {
            throw ValidationError("--until must be available, pending or invalidated")
        }
    }

    func run() async throws {
        try await reporting {
            let agent = try global.openAgent()
            let reports = try agent.watch(tip: tip)
            // Other processes (the daemon's sync, CLI calls) write to the store: pick that up quickly.
            let poll = Task {
                while !Task.isCancelled {
                    _ = try? agent.replica.reloadIfChangedElsewhere()
                    _ = try? agent.reloadCatalogIfChanged()
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { poll.cancel() }
            let until = self.until
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await report in reports {
                        FileHandle.standardOutput.write(Data((report.jsonLine + "\n").utf8))
                        if report.status == until { return }
                    }
                }
                if let timeout {
                    group.addTask {
                        try await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                        throw AgentError(.timeout, message: "no '\(until ?? "change")' within \(timeout) s")
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}

struct ExportHistory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-history", abstract: "Write this device's change log to a file, for replay.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The file to write (- for stdout).") var file: String

    func run() async throws {
        try await reporting {
            let text = try global.openAgent().exportHistory()
            if file == "-" {
                print(text, terminator: "")
            } else {
                try AgentStore.write(Data(text.utf8), to: file, permissions: 0o644)
            }
        }
    }
}
