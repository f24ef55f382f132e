import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import TipSyncCore
import TipSyncServer

@main
struct TipSyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tipsync-server",
        abstract: "TipSync's sync server: exchanges tip change logs between a person's devices.",
        subcommands: [
            Serve.self, Migrate.self, Accounts.self, Tokens.self, AdminKeys.self, CatalogCommand.self, Compact.self,
            RotateCursors.self,
        ],
        defaultSubcommand: Serve.self)
}

/// Options every command shares. Each flag falls back to the environment variable named in its help.
struct DatabaseOptions: ParsableArguments {
    @Option(
        help:
            "sqlite:PATH or postgres://user:password@host:5432/db (env TIPSYNC_DATABASE; default \(DatabaseLocation.defaultValue))."
    )
    var database: String?

    /// Opens (and migrates) the store for the duration of `body`, saying on stderr which database
    /// it is. Only `creating` commands (`serve`, `migrate`, `accounts create`, `admin-keys create`)
    /// may create a SQLite database that does not exist; the others refuse, naming the path.
    func withStore<Result: Sendable>(
        creating: Bool = false, _ body: (any SyncStore) async throws -> Result
    ) async throws -> Result {
        let text = database ?? ProcessInfo.processInfo.environment["TIPSYNC_DATABASE"] ?? DatabaseLocation.defaultValue
        let location = try DatabaseLocation(text)
        if creating || location.exists {
            FileHandle.standardError.write(
                Data("tipsync-server: database \(location.description)\(location.exists ? "" : " (new)")\n".utf8))
        }
        return try await location.withStore(creating: creating, body)
    }
}

/// A flag's value, else its environment variable, else the default.
func setting<T: LosslessStringConvertible>(_ flag: T?, _ variable: String, _ fallback: T) throws -> T {
    if let flag { return flag }
    guard let text = ProcessInfo.processInfo.environment[variable] else { return fallback }
    guard let value = T(text) else { throw ValidationError("\(variable)='\(text)' is not a valid value") }
    return value
}

/// A flag's value, else its environment variable, else `nil`.
func optionalSetting(_ flag: String?, _ variable: String) -> String? {
    flag ?? ProcessInfo.processInfo.environment[variable]
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server until SIGTERM or SIGINT.")

    @Option(help: "Address to bind (env HTTP_HOST; default 127.0.0.1).") var httpHost: String?
    @Option(help: "Port to bind (env HTTP_PORT; default 8080).") var httpPort: Int?
    @OptionGroup var databaseOptions: DatabaseOptions
    @Option(help: "Largest request body in bytes (env TIPSYNC_MAX_BODY_BYTES; default 4194304).") var maxBodyBytes: Int?
    @Option(help: "Most changes per push (env TIPSYNC_MAX_BATCH; default 1000).") var maxBatch: Int?
    @Option(
        help: "Seconds a change may be stamped ahead of the server clock (env TIPSYNC_MAX_CLOCK_SKEW; default 300).")
    var maxClockSkew: Int?
    @Option(help: "Seconds between heartbeats on live streams (env TIPSYNC_HEARTBEAT; default 15).") var heartbeat:
        Double?
    @Option(
        help:
            "Seconds a connection has to deliver a complete request head, after opening or after its previous response (env TIPSYNC_REQUEST_HEAD_TIMEOUT; default 10)."
    )
    var requestHeadTimeout: Double?
    @Option(
        help: "Seconds a request's body has to arrive after its head (env TIPSYNC_REQUEST_BODY_TIMEOUT; default 30).")
    var requestBodyTimeout: Double?
    @Option(
        help:
            "Open connections beyond this wait in the kernel backlog (env TIPSYNC_MAX_CONNECTIONS; default: the open-file limit less 256)."
    )
    var maxConnections: Int?
    @Option(help: "Longest 'wait' a long-poll pull may ask for, in seconds (env TIPSYNC_MAX_WAIT; default 60).")
    var maxWait: Double?
    @Option(
        help:
            "Milliseconds a long-poll with changes to send waits to gather more (env TIPSYNC_LONG_POLL_GATHER; default 10; 0: answer at once)."
    )
    var longPollGather: Int?
    @Option(help: "Requests per second per device, on average (env TIPSYNC_RATE_REQUESTS; default 20; 0: no limit).")
    var rateRequests: Double?
    @Option(help: "Requests per device at once (env TIPSYNC_RATE_REQUESTS_BURST; default 200).")
    var rateRequestsBurst: Double?
    @Option(
        help: "Pushed changes per second per device, on average (env TIPSYNC_RATE_CHANGES; default 1000; 0: no limit).")
    var rateChanges: Double?
    @Option(
        help: "Pushed changes per device at once; at least --max-batch (env TIPSYNC_RATE_CHANGES_BURST; default 10000)."
    )
    var rateChangesBurst: Double?
    @Option(
        help:
            "Refused sign-ins per second per client address, on average (env TIPSYNC_RATE_FAILED_SIGN_INS; default 0.2; 0: no limit)."
    )
    var rateFailedSignIns: Double?
    @Option(help: "Refused sign-ins per client address at once (env TIPSYNC_RATE_FAILED_SIGN_INS_BURST; default 20).")
    var rateFailedSignInsBurst: Double?
    @Option(
        help:
            "Compact an account in the background once its log grew by this many entries (env TIPSYNC_AUTO_COMPACT_AFTER; default 10000; 0: never)."
    )
    var autoCompactAfter: Int?
    @Option(
        help:
            "Seconds per interval of counted requests: when one falls to a tenth of the busiest, the server returns cached and freed memory to the system (env TIPSYNC_MEMORY_RELEASE_INTERVAL; default 30; 0: never)."
    )
    var memoryReleaseInterval: Double?
    @Flag(help: "Serve the operator console at /console, logged in with an admin key (env TIPSYNC_CONSOLE=1).")
    var console = false
    @Option(
        help:
            "Comma-separated web origins whose pages may call /v1 (CORS), e.g. https://app.example.com, or * (env TIPSYNC_CORS_ORIGINS; default none)."
    )
    var corsOrigins: String?
    @Option(help: "File holding the HS256 secret for JWT device sign-in (env TIPSYNC_JWT_SECRET_FILE).")
    var jwtSecretFile: String?
    @Option(
        help:
            "File holding a JWKS with the identity provider's public keys; re-read on SIGHUP or change (env TIPSYNC_JWT_JWKS_FILE)."
    )
    var jwtJwksFile: String?
    @Option(help: "The 'iss' every JWT must carry (env TIPSYNC_JWT_ISSUER).") var jwtIssuer: String?
    @Option(help: "A value every JWT's 'aud' must contain (env TIPSYNC_JWT_AUDIENCE).") var jwtAudience: String?
    @Option(help: "Log level (env LOG_LEVEL; default info).") var logLevel: String?

    func run() async throws {
        let level = try setting(logLevel, "LOG_LEVEL", "info")
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: level) ?? .info
            return handler
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

        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = try setting(maxBodyBytes, "TIPSYNC_MAX_BODY_BYTES", configuration.maxBodyBytes)
        configuration.maxBatch = try setting(maxBatch, "TIPSYNC_MAX_BATCH", configuration.maxBatch)
        configuration.maxClockSkewMilliseconds =
            Int64(
                try setting(maxClockSkew, "TIPSYNC_MAX_CLOCK_SKEW", Int(configuration.maxClockSkewMilliseconds / 1000)))
            * 1000
        configuration.heartbeatSeconds = try setting(heartbeat, "TIPSYNC_HEARTBEAT", configuration.heartbeatSeconds)
        configuration.requestHeadTimeoutSeconds = try setting(
            requestHeadTimeout, "TIPSYNC_REQUEST_HEAD_TIMEOUT", configuration.requestHeadTimeoutSeconds)
        configuration.requestBodyTimeoutSeconds = try setting(
            requestBodyTimeout, "TIPSYNC_REQUEST_BODY_TIMEOUT", configuration.requestBodyTimeoutSeconds)
        if let maximum = try maxConnections
            ?? ProcessInfo.processInfo.environment["TIPSYNC_MAX_CONNECTIONS"].map({
                guard let value = Int($0) else {
                    throw ValidationError("TIPSYNC_MAX_CONNECTIONS='\($0)' is not a valid value")
                }
                return value
            })
        {
            configuration.maxConnections = maximum
        }
        configuration.maxWaitSeconds = try setting(maxWait, "TIPSYNC_MAX_WAIT", configuration.maxWaitSeconds)
        configuration.longPollGatherMilliseconds = try setting(
            longPollGather, "TIPSYNC_LONG_POLL_GATHER", configuration.longPollGatherMilliseconds)
        configuration.requestRate = RateLimit(
            perSecond: try setting(rateRequests, "TIPSYNC_RATE_REQUESTS", configuration.requestRate.perSecond),
            burst: try setting(rateRequestsBurst, "TIPSYNC_RATE_REQUESTS_BURST", configuration.requestRate.burst))
        configuration.changeRate = RateLimit(
            perSecond: try setting(rateChanges, "TIPSYNC_RATE_CHANGES", configuration.changeRate.perSecond),
            burst: try setting(rateChangesBurst, "TIPSYNC_RATE_CHANGES_BURST", configuration.changeRate.burst))
        configuration.failedSignInRate = RateLimit(
            perSecond: try setting(
                rateFailedSignIns, "TIPSYNC_RATE_FAILED_SIGN_INS", configuration.failedSignInRate.perSecond),
            burst: try setting(
                rateFailedSignInsBurst, "TIPSYNC_RATE_FAILED_SIGN_INS_BURST", configuration.failedSignInRate.burst))
        configuration.autoCompactAfter = try setting(
            autoCompactAfter, "TIPSYNC_AUTO_COMPACT_AFTER", configuration.autoCompactAfter)
        configuration.memoryReleaseIntervalSeconds = try setting(
            memoryReleaseInterval, "TIPSYNC_MEMORY_RELEASE_INTERVAL", configuration.memoryReleaseIntervalSeconds)
        guard configuration.memoryReleaseIntervalSeconds >= 0, configuration.memoryReleaseIntervalSeconds.isFinite
        else {
            throw ValidationError("--memory-release-interval must be a non-negative number of seconds")
        }
        configuration.console =
            console || ["1", "true", "yes"].contains(ProcessInfo.processInfo.environment["TIPSYNC_CONSOLE"] ?? "")
        configuration.corsOrigins = Set(
            (corsOrigins ?? ProcessInfo.processInfo.environment["TIPSYNC_CORS_ORIGINS"] ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        for (name, rate) in [
            ("requests", configuration.requestRate), ("changes", configuration.changeRate),
            ("failed sign-ins", configuration.failedSignInRate),
        ] {
            guard rate.perSecond >= 0, rate.burst >= 0, rate.perSecond.isFinite, rate.burst.isFinite else {
                throw ValidationError("the \(name) rate limit must be a non-negative number")
            }
        }
        if configuration.changeRate.perSecond > 0, configuration.changeRate.burst < Double(configuration.maxBatch) {
            throw ValidationError("--rate-changes-burst must be at least --max-batch (\(configuration.maxBatch))")
        }
        guard configuration.requestHeadTimeoutSeconds > 0, configuration.requestBodyTimeoutSeconds > 0 else {
            throw ValidationError("request timeouts must be positive numbers of seconds")
        }
        let jwtConfiguration = JWTSignIn.Configuration(
            secretFile: optionalSetting(jwtSecretFile, "TIPSYNC_JWT_SECRET_FILE"),
            jwksFile: optionalSetting(jwtJwksFile, "TIPSYNC_JWT_JWKS_FILE"),
            issuer: optionalSetting(jwtIssuer, "TIPSYNC_JWT_ISSUER"),
            audience: optionalSetting(jwtAudience, "TIPSYNC_JWT_AUDIENCE"))
        let jwt = jwtConfiguration.isEnabled ? try await JWTSignIn(configuration: jwtConfiguration) : nil
        if jwt != nil {
            logger.info(
                "JWT sign-in enabled",
                metadata: [
                    "issuer": "\(jwtConfiguration.issuer ?? "-")", "audience": "\(jwtConfiguration.audience ?? "-")",
                ])
        }
        if configuration.console {
            logger.info("console on at /console (log in with an admin key)")
        } else {
            logger.info("console off; start with --console (or TIPSYNC_CONSOLE=1) to serve it at /console")
        }
        let host = try setting(httpHost, "HTTP_HOST", "127.0.0.1")
        let port = try setting(httpPort, "HTTP_PORT", 8080)

        try await databaseOptions.withStore(creating: true) { store in
            let app = buildApplication(
                address: .hostname(host, port: port), store: store, configuration: configuration, jwt: jwt,
                registry: registry, logger: logger)
            try await app.runService()
        }
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
    static let configuration = CommandConfiguration(subcommands: [Create.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a device token; prints only the token (stored as a hash, shown once).")
        @Option var account: String
        @Option var device: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            try checkName(device, "--device")
            print(
                try await databaseOptions.withStore { try await $0.createToken(accountName: account, device: device) })
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
                try await databaseOptions.withStore(creating: true) { try await $0.createAdminKey(name: name, at: now) }
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
        try await databaseOptions.withStore(creating: true) { _ in }
        print("schema is up to date")
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
            return try await store.compact(account: id)
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
        commandName: "catalog", abstract: "The tip catalog the console shows (titles, status).",
        subcommands: [Put.self, Show.self, Versions.self, Restore.self])

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a catalog file (the format of protocol.md section 13) and store it.")
        @Argument(help: "The catalog JSON file.") var file: String
        @OptionGroup var databaseOptions: DatabaseOptions

        func run() async throws {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            let catalog: Catalog
            do {
                catalog = try Catalog(validating: Array(data))
            } catch {
                throw ValidationError("\(file): \(error.description)")
            }
            let version = try await databaseOptions.withStore { store in
                try await store.putCatalogJSON(String(decoding: data, as: UTF8.self), uploadedBy: "cli")
            }
            print("stored a catalog of \(catalog.tips.count) tips as version \(version)")
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
                return try await store.putCatalogJSON(
                    old.text, uploadedBy: "cli", at: Int64(Date().timeIntervalSince1970 * 1000), restoredFrom: version)
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
