import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus
import TipSyncCore
import TipSyncServer

@main
struct TipSyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tipsync-server",
        abstract: "TipSync's sync server: exchanges tip change logs between a person's devices.",
        version: TipSyncVersion.description,
        subcommands: [
            Serve.self, Migrate.self, Accounts.self, Tokens.self, AdminKeys.self, CatalogCommand.self,
            ExperimentCommand.self, Compact.self, RotateCursors.self, Settings.self,
        ],
        defaultSubcommand: Serve.self)

    /// A first word that names no command is refused — `serve` is the default command, and would
    /// otherwise run with the misspelled command as a stray argument (`tipsync-server acounts create
    /// bob` started a server) — in one line, with the closest command, exit status 64.
    static func main() async {
        let commands = configuration.subcommands.map { $0._commandName }
        if let word = CommandLine.arguments.dropFirst().first,
            let message = NameSuggestion.unknownCommand(word, commands: commands)
        {
            FileHandle.standardError.write(Data("tipsync-server: \(message)\n".utf8))
            Foundation.exit(64)
        }
        await main(nil)
    }
}

/// A command that cannot do what it was asked, for a reason in the operator's terms: one line on
/// stderr (`Error: …`), exit status 1, no usage.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Options every operator command shares: the database, from `--database`, `TIPSYNC_DATABASE` or the
/// environment file of `--config-file` / `TIPSYNC_CONFIG_FILE`, as `serve` reads it.
struct DatabaseOptions: ParsableArguments {
    @Option(help: settingHelp("tipsync.database")) var database: String?
    @Option(help: settingHelp("tipsync.configFile")) var configFile: String?
    @Option(
        help: ArgumentHelp(
            "How long to wait for PostgreSQL to answer, in seconds (default for a command: \(Self.commandWait); serve's: 60).",
            valueName: "database-wait"))
    var databaseWait: String?

    /// How long a one-shot command waits for an unreachable PostgreSQL unless told otherwise
    /// (`--database-wait` or `TIPSYNC_DATABASE_WAIT`): a few seconds, not `serve`'s minute (issue
    /// 73, item 7: `accounts list` sat for 60 s before saying the database was unreachable).
    static let commandWait = 3

    /// Opens (and migrates) the store for the duration of `body`, saying on stderr which database
    /// it is. Only `creating` commands (`serve`, `migrate`, `accounts create`, `admin-keys create`)
    /// may create a SQLite database that does not exist; the others refuse, naming the path.
    func withStore<Result: Sendable>(
        creating: Bool = false, _ body: (any SyncStore) async throws -> Result
    ) async throws -> Result {
        let environment = ProcessInfo.processInfo.environment
        let arguments =
            (database.map { ["--database", $0] } ?? []) + (configFile.map { ["--config-file", $0] } ?? [])
            + (databaseWait.map { ["--database-wait", $0] } ?? [])
        let configuration = try await ServerConfiguration.load(arguments: arguments, environment: environment)
        let asked = databaseWait != nil || environment["TIPSYNC_DATABASE_WAIT"] != nil
        return try await configuration.database.withAnnouncedStore(
            creating: creating,
            waiting: asked ? configuration.databaseWait : min(configuration.databaseWait, .seconds(Self.commandWait)),
            body)
    }
}

extension DatabaseLocation {
    /// ``withStore(creating:_:)``, first saying on stderr which database it is: a plain line for a
    /// command, a log record (`logged`, what `serve` does) in the log's format.
    func withAnnouncedStore<Result: Sendable>(
        creating: Bool, waiting: Duration, logger: Logger = Logger(label: "tipsync-server"), logged: Bool = false,
        _ body: (any SyncStore) async throws -> Result
    ) async throws -> Result {
        let announcement = "database \(description)\(exists ? "" : " (new)")"
        if logged, !exists {
            // The operator's trap (issue 72): a server started from another folder without
            // TIPSYNC_DATABASE runs on a new, empty database, and every device's token is refused.
            logger.warning(
                "created a new, empty database at \(description): it knows no account and no token, so every device that synced with another database is refused here; if that is not what you meant, stop the server and set --database or TIPSYNC_DATABASE"
            )
        } else if logged {
            logger.info("\(announcement)")
        } else if creating || exists {
            FileHandle.standardError.write(Data("tipsync-server: \(announcement)\n".utf8))
        }
        do {
            return try await withStore(logger: logger, creating: creating, waiting: waiting, body)
        } catch let error as PostgresReachability.Unreachable {
            throw CommandFailure(error.description)
        }
    }
}

/// A flag's help, from the setting's description (``ServerConfiguration/settings``).
func settingHelp(_ key: String) -> ArgumentHelp {
    guard let setting = ServerConfiguration.settings.first(where: { $0.key == key }) else { return "" }
    return ArgumentHelp("\(setting.summary) (env \(setting.environmentVariable); default \(setting.defaultValue)).")
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the server until SIGTERM or SIGINT.",
        discussion: """
            Each setting is taken from its flag, else its environment variable, else the environment file \
            named by --config-file, else its default (deploy/README.md, "Settings").

            \(ServerConfiguration.settings.map(\.helpText).joined(separator: "\n"))
            """)

    /// The settings' flags, read by ``ServerConfiguration/load(arguments:environment:)`` (which refuses
    /// a flag that names no setting).
    @Argument(parsing: .allUnrecognized, help: .hidden) var settings: [String] = []

    func validate() throws {
        // Settings are flags; a bare word is a mistake (a misspelled command after `serve`).
        for (index, word) in settings.enumerated() where !word.hasPrefix("-") {
            let previous = index > 0 ? settings[index - 1] : ""
            guard !previous.hasPrefix("--") || previous.contains("=") else { continue }  // a flag's value
            throw ValidationError("'serve' takes settings as flags (--name value); '\(word)' is not one")
        }
    }

    func run() async throws {
        EventLoopCount.apply()
        let configuration: ServerConfiguration
        do {
            configuration = try await ServerConfiguration.load(
                arguments: settings, environment: ProcessInfo.processInfo.environment)
        } catch let error as SettingError {
            throw ValidationError(error.description)
        }
        LoggingSystem.bootstrap { label in configuration.logFormat.handler(label: label, level: configuration.logLevel)
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DocumentedMetricsFactory(registry: registry))
        let logger = Logger(label: "tipsync-server")
        // Every connection holds a descriptor: the usual soft limit (1024) is far too low for a server.
        let files = FileDescriptorLimit.raiseSoftLimitToHardLimit()
        logger.info(
            "open-file limit",
            metadata: ["soft": "\(files.after)", "softAtStart": "\(files.before)", "hard": "\(files.hard)"])
        if files.after < 4096 {
            logger.warning(
                "the open-file limit is low: raise the hard limit (systemd LimitNOFILE, docker ulimits nofile)",
                metadata: ["soft": "\(files.after)"])
        }
        let jwt = configuration.jwt.isEnabled ? try await JWTSignIn(configuration: configuration.jwt) : nil
        if jwt != nil {
            logger.info(
                "JWT sign-in enabled",
                metadata: [
                    "issuer": "\(configuration.jwt.issuer ?? "-")", "audience": "\(configuration.jwt.audience ?? "-")",
                ])
        }
        if let tls = configuration.tls {
            // Issue 73, item 7: the start log said nothing of TLS.
            let certificate: TLSFiles.Summary
            do {
                certificate = try tls.summary()
            } catch let error as SettingError {
                throw CommandFailure(error.description)
            }
            let expires = certificate.expires.formatted(.iso8601)
            logger.info(
                "TLS on: https://\(configuration.httpHost):\(configuration.httpPort)",
                metadata: ["certificate": "\(certificate.subject)", "expires": "\(expires)"])
            let left = certificate.expires.timeIntervalSinceNow
            if left < 14 * 86400 {
                logger.warning(
                    left < 0
                        ? "the TLS certificate has expired: clients refuse it" : "the TLS certificate expires soon",
                    metadata: ["certificate": "\(certificate.subject)", "expires": "\(expires)"])
            }
        } else {
            logger.info(
                "TLS off: http://\(configuration.httpHost):\(configuration.httpPort) (put a TLS proxy in front, or pass --tls-certificate and --tls-key)"
            )
        }
        if configuration.console {
            logger.info("console on at /console (log in with an admin key)")
        } else {
            logger.info("console off; start with --console (or TIPSYNC_CONSOLE=1) to serve it at /console")
        }
        try await configuration.database.withAnnouncedStore(
            creating: true, waiting: configuration.databaseWait, logger: logger, logged: true
        ) { store in
            let app = buildApplication(
                configuration: configuration,
                dependencies: ServerDependencies(store: store, jwt: jwt, registry: registry, logger: logger))
            do {
                try await ShutdownAnnouncement.announcing(logger: logger) { try await app.runService() }
            } catch let error as SettingError {
                throw CommandFailure(error.description)  // a TLS file that cannot be read
            } catch let error as IOError where error.errnoCode == EADDRINUSE {
                // SwiftNIO's words name neither the address nor what to do.
                throw CommandFailure(
                    "\(configuration.httpHost) port \(configuration.httpPort) is in use (another tipsync-server?); "
                        + "stop it, or choose another port with --http-port or HTTP_PORT")
            }
        }
    }
}

struct Settings: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every setting of 'serve' as a Markdown table: flag, environment variable, default, meaning.")

    func run() {
        print(ServerConfiguration.settingsTable)
    }
}

extension Setting {
    /// One line of `serve --help`: flag, variable, default (and unit), summary.
    var helpText: String {
        "  \(flag) (\(environmentVariable); default \(defaultValue)\(unit.map { " " + $0 } ?? "")): \(summary)"
    }
}

struct Accounts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Accounts: the same operations as the admin API (/admin/v1/accounts), on the database directly.",
        subcommands: [Create.self, List.self, Show.self, Delete.self, Export.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an account; prints its name, the one way every command and the API name it.")
        @Argument var name: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            try checkName(name, "name")
            _ = try await databaseOptions.withStore(creating: true) { try await $0.createAccount(name: name) }
            print(name)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List accounts by name: name, devices, log entries, created (tab-separated).")
        @Option(help: "Start after this name (paging).") var after: String?
        @Option(help: "At most this many accounts.") var limit = 100
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            let accounts = try await databaseOptions.withStore { try await $0.accounts(after: after, limit: limit) }
            for account in accounts {
                print(
                    [account.name, String(account.devices), String(account.logEntries), timestamp(account.createdAt)]
                        .joined(separator: "\t"))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show an account: log counters and every device (JSON, as GET /admin/v1/accounts/{account}).")
        @Argument var name: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            guard let details = try await databaseOptions.withStore({ try await $0.accountDetails(name: name) }) else {
                throw StoreError("no account named '\(name)'")
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(details), as: UTF8.self))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase an account: its log, devices and tokens (right to erasure). Cannot be undone.",
            discussion: """
                Credentials issued before the erasure stay refused (device tokens are deleted; JWTs whose \
                'iat' is not later are refused). With PostgreSQL, running servers end the account's live \
                streams at once; with SQLite, erase through the admin API for that.
                """)
        @Argument var name: String
        @Flag(help: "Confirm: without it nothing is erased.") var yes = false
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            guard yes else { throw ValidationError("erasing '\(name)' cannot be undone: add --yes to confirm") }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            guard
                let (_, entries) = try await databaseOptions.withStore({
                    try await $0.eraseAccount(name: name, at: now)
                })
            else { throw StoreError("no account named '\(name)'") }
            print("erased '\(name)' and \(entries) log entries")
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an account's whole change log as JSON lines, in log order (portability).")
        @Argument var name: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            try await databaseOptions.withStore { store in
                guard let id = try await store.accountID(named: name) else {
                    throw StoreError("no account named '\(name)'")
                }
                try await store.exportLog(account: id) { bodies in
                    for body in bodies { print(body) }
                }
            }
        }
    }
}

struct Tokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Device tokens: create one (printed once, stored as a hash) or revoke one.",
        subcommands: [Create.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a device token; prints only the token (stored as a hash, shown once).")
        @Option var account: String
        @Option var device: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            try checkName(device, "--device")
            print(
                try await databaseOptions.withStore {
                    try await CredentialIssuance($0).createToken(accountName: account, device: device)
                })
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke every token of a device (a lost phone); JWTs issued before now are refused for it too.",
            discussion: """
                With PostgreSQL, running servers end the device's live streams at once; with SQLite, revoke \
                through the admin API for that (the CLI's revocation refuses the device's next request).
                """)
        @Option var account: String
        @Option var device: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            guard
                let (_, count) = try await databaseOptions.withStore({
                    try await $0.revokeTokens(accountName: account, device: device, at: now)
                })
            else { throw StoreError("no device '\(device)' in account '\(account)'") }
            print("revoked \(count) tokens of '\(device)'")
        }
    }
}

struct AdminKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-keys", abstract: "Keys for the admin API (/admin/v1) and the console.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an admin key; prints only the key (tsa_…, stored as a hash, shown once).")
        @Option(help: "A name to list and revoke it by (default: the key's first 12 characters).") var name: String?
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            if let name { try checkName(name, "--name") }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            print(
                try await databaseOptions.withStore(creating: true) {
                    try await CredentialIssuance($0).createAdminKey(name: name, at: now)
                }
                .key)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List admin keys: name and creation time.")
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            for key in try await databaseOptions.withStore({ try await $0.adminKeys() }) {
                print("\(key.name)\t\(timestamp(key.createdAt))")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an admin key by name.")
        @Argument var name: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            guard try await databaseOptions.withStore({ try await $0.revokeAdminKey(name: name) }) else {
                throw StoreError("no admin key named '\(name)'")
            }
            print("revoked admin key '\(name)'")
        }
    }
}

/// An ISO 8601 time for a millisecond timestamp, `-` for none.
func timestamp(_ milliseconds: Int64?) -> String {
    guard let milliseconds else { return "-" }
    return Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(.iso8601)
}

/// Refuses a name the server would refuse (protocol.md section 6).
func checkName(_ name: String, _ option: String) throws {
    if let violation = NameRules.violation(name) { throw ValidationError("\(option) \(violation)") }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade the database schema, then exit (serve also does this before accepting requests).")
    @OptionGroup var databaseOptions: DatabaseOptions

    func run() async throws {
        let version = try await databaseOptions.withStore(creating: true) { try await $0.schemaVersion() }
        print("schema is up to date: \(version)")
    }
}

struct Compact: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Drop superseded change-log entries of an account.")
    @Option(help: "Account name.") var account: String
    @OptionGroup var databaseOptions: DatabaseOptions

    func run() async throws {
        let dropped = try await databaseOptions.withStore { store in
            guard let id = try await store.accountID(named: account) else {
                throw StoreError("no account named '\(account)'; create it with 'tipsync-server accounts create'")
            }
            return try await LogCompactor(store: store).compact(account: id)
        }
        print("dropped \(dropped) superseded changes")
    }
}

struct RotateCursors: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-cursors",
        abstract: "Invalidate every pull cursor handed out so far (run after restoring a backup).",
        discussion: """
            After a restore, positions the old log had handed out are handed out again for other changes; \
            a device still holding an old cursor would skip them. Rotating makes the server refuse every \
            old cursor (invalid_cursor), so each device pulls from the start once; merging is idempotent \
            and devices keep their unsent changes.
            """)
    @OptionGroup var databaseOptions: DatabaseOptions

    func run() async throws {
        let generation = try await databaseOptions.withStore { try await $0.rotateCursorGeneration() }
        print("cursor generation is now \(generation); devices will pull from the start once")
    }
}

struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract:
            "The catalog served to devices (GET /v1/catalog): put a new version, show it, list versions, restore one.",
        subcommands: [Put.self, Show.self, Versions.self, Restore.self, RemovePlatform.self])

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Validate a catalog file (the format of protocol.md section 13) and store it: the whole catalog, or with --platform one platform's part of it."
        )
        @Argument(help: "The catalog JSON file.") var file: String
        @Option(
            help:
                "Merge the file as this platform's part (ios, web…; protocol.md §13.11): it replaces that platform's own tips and settings and leaves every other platform's tips."
        )
        var platform: String?
        @Flag(
            help:
                "Store the file as the whole catalog even when that removes tips or settings that platforms' parts added (without it, such an upload is refused, naming them)."
        )
        var replaceAll = false
        @OptionGroup var databaseOptions: DatabaseOptions

        func validate() throws {
            if let platform, let problem = Catalog.platformProblem(platform) {
                throw ValidationError("--platform: \(problem)")
            }
            if platform != nil, replaceAll {
                throw ValidationError(
                    "--replace-all: a platform's part replaces only that platform's tips; drop one of them")
            }
        }

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: file) else {
                let exists = FileManager.default.fileExists(atPath: file)
                throw CommandFailure(
                    "cannot read the catalog file '\(file)': "
                        + (exists ? "permission denied, or it is a directory" : "no such file"))
            }
            let catalog: Catalog
            do {
                catalog = try Catalog(validating: Array(data))
            } catch {
                throw ValidationError("\(file): \(error.description)")
            }
            if let platform {
                let (version, tips) = try await databaseOptions.withStore { store in
                    do {
                        return try await CatalogComposition(store).mergePlatformPart(
                            catalog, as: platform, uploadedBy: "cli", at: Int64(Date().timeIntervalSince1970 * 1000))
                    } catch let error as CatalogCompositionError {
                        throw ValidationError("\(file): \(error.description)")
                    }
                }
                print(
                    "merged \(catalog.tips.count) tips as the '\(platform)' part: a catalog of \(tips) tips, version \(version)"
                )
                return
            }
            let version = try await databaseOptions.withStore { store in
                do {
                    return try await CatalogComposition(store).putWholeCatalog(
                        String(decoding: data, as: UTF8.self), replacingParts: replaceAll, uploadedBy: "cli",
                        at: Int64(Date().timeIntervalSince1970 * 1000))
                } catch let error as CatalogCompositionError {
                    throw ValidationError("\(file): \(error.description)")
                } catch let error as PlatformPartsWouldGo {
                    throw ValidationError(
                        "\(file): \(error.description) (--platform NAME uploads a part; --replace-all removes them)")
                }
            }
            print("stored a catalog of \(catalog.tips.count) tips as version \(version)")
        }
    }

    struct RemovePlatform: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-platform",
            abstract:
                "Remove one platform's part of the stored catalog: its own tips and settings go, shared tips lose it (protocol.md §13.11)."
        )
        @Argument(help: "The platform (ios, web…).") var platform: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func validate() throws {
            if let problem = Catalog.platformProblem(platform) { throw ValidationError("platform: \(problem)") }
        }

        func run() async throws {
            let removed = try await databaseOptions.withStore { store in
                try await CatalogComposition(store).removePlatformPart(
                    platform, uploadedBy: "cli", at: Int64(Date().timeIntervalSince1970 * 1000))
            }
            guard let (version, tips) = removed else {
                throw StoreError("no catalog stored; 'tipsync-server catalog put FILE' stores one")
            }
            print("removed the '\(platform)' part: a catalog of \(tips) tips, version \(version)")
        }
    }

    struct Versions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every stored catalog version, newest first, with what changed.")
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            let list = CatalogVersionList(try await databaseOptions.withStore { try await $0.catalogVersions() })
            for entry in list.versions {
                let restored = entry.restoredFrom.map { ", restores \($0)" } ?? ""
                let current = entry.current ? " (current)" : ""
                print(
                    "\(entry.version)\(current)\t\(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(entry.uploadedAt) / 1000)))\t\(entry.uploadedBy)\(restored)\t\(entry.summary)"
                )
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Make an earlier catalog version current again (as a new version). Through the admin API a running server tells devices at once; here they see it within about a second."
        )
        @Argument(help: "The version number (see 'catalog versions').") var version: Int64
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            let new = try await databaseOptions.withStore { store in
                guard let old = try await store.catalogVersions().first(where: { $0.version == version }) else {
                    throw StoreError("no catalog version \(version); 'tipsync-server catalog versions' lists them")
                }
                do {
                    return try await CatalogComposition(store).putCatalogJSON(
                        old.text, uploadedBy: "cli", at: Int64(Date().timeIntervalSince1970 * 1000),
                        restoredFrom: version)
                } catch let error as CatalogCompositionError {
                    throw CommandFailure("version \(version): \(error.description)")
                }
            }
            print("restored version \(version) as version \(new)")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the stored catalog.")
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            guard let text = try await databaseOptions.withStore({ try await $0.catalogJSON() }) else {
                throw StoreError("no catalog stored; store one with 'tipsync-server catalog put FILE'")
            }
            print(text)
        }
    }
}
