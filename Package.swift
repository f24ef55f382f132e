// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

/// What every server test target may import: the server's modules, their test helpers, and the
/// packages the tests speak to them with.
let serverTestDependencies: [Target.Dependency] = [
    "TipSyncCore", "TipSyncNetworking", "TipSyncServerBasics", "TipSyncStorage", "TipSyncSQLiteStorage",
    "TipSyncPostgresStorage", "TipSyncDeviceService", "TipSyncOperatorService", "TipSyncServer", "TipSync",
    "TipSyncTestSupport", "TipSyncServerTestSupport", "tipsync-server",
    tool("HummingbirdTesting", "hummingbird"),
    tool("JWTKit", "jwt-kit"),
    tool("Crypto", "swift-crypto"),
    tool("Prometheus", "swift-prometheus"),
    tool("CompressNIO", "compress-nio"),
    tool("ServiceLifecycle", "swift-service-lifecycle"),
    tool("Logging", "swift-log"),
    tool("NIOCore", "swift-nio"),
    tool("NIOEmbedded", "swift-nio"),
    tool("NIOHTTP1", "swift-nio"),
    tool("NIOHTTPTypes", "swift-nio-extras"),
    tool("NIOHTTPTypesHTTP1", "swift-nio-extras"),
    tool("NIOSSL", "swift-nio-ssl"),
    tool("X509", "swift-certificates"),
    tool("AsyncHTTPClient", "async-http-client"),
]

let package = Package(
    name: "TipSync",
    // The minimums of Synchronization.Mutex, which the core and the library use.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        // What apps import: the TipKit-shaped engine, its SQLite replica and (later) the sync client.
        .library(name: "TipSync", targets: ["TipSync"]),
        // The pure core (model, rules, HLC, merge) for servers and tools that need no replica.
        .library(name: "TipSyncCore", targets: ["TipSyncCore"]),
        .executable(name: "tipsync-bench", targets: ["tipsync-bench"]),
        .executable(name: "tipsync-server", targets: ["tipsync-server"]),
        .executable(name: "tipsync-agent", targets: ["tipsync-agent"]),
        .executable(name: "tipsync-sim", targets: ["tipsync-sim"]),
    ],
    // `Tools` (on by default): the server, the agent, the simulator, the benchmarks and the tests, and
    // every package only they use. An app that imports `TipSync` adds this package with `traits: []`
    // and resolves only GRDB and swift-syntax (README, "Add the package").
    traits: [
        .trait(
            name: "Tools", description: "The server, agent, simulator, benchmarks and their packages.",
            enabledTraits: ["NIOHTTPClient"]),
        // On Linux, URLSession (FoundationNetworking over libcurl) polls an idle live stream about
        // 100,000 times a second; with this trait the library syncs over async-http-client (SwiftNIO,
        // epoll), which sleeps until bytes arrive. Apple platforms keep URLSession either way.
        .trait(
            name: "NIOHTTPClient",
            description: "Sync over async-http-client on Linux instead of URLSession (an idle device costs nothing)."),
        .default(enabledTraits: ["Tools"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The server's settings: flags, environment and an environment file through one reader.
        .package(
            url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["CommandLineArguments"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // Pure core: no I/O, no database. Model, rule expressions and their evaluator, HLC, change log entries, merge.
        .target(name: "TipSyncCore"),
        // `@Parameter` and `#Rule` (compile-time only; never linked into apps).
        .macro(
            name: "TipSyncMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftOperators", package: "swift-syntax"),
            ]
        ),
        // The system's zlib: the client gzips its push bodies (protocol.md section 5).
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // The library apps import: TipKit's API over a local SQLite replica.
        .target(
            name: "TipSync",
            dependencies: [
                "TipSyncCore",
                "TipSyncMacros",
                "CZlib",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client",
                    condition: .when(platforms: [.linux], traits: ["NIOHTTPClient"])),
            ]
        ),
        // The README's walkthrough program, verbatim (README blocks are checked against it by the suite).
        .executableTarget(name: "tipsync-walkthrough", dependencies: ["TipSync"], path: "Examples/Walkthrough"),
        // The README's catalog-export build step, verbatim: prints the catalog of the tips it declares.
        .executableTarget(name: "tipsync-export-example", dependencies: ["TipSync"], path: "Examples/ExportCatalog"),
        // Performance measurements recorded in BENCHMARKS.md (run in release mode).
        .executableTarget(
            name: "tipsync-bench",
            dependencies: [
                "TipSync", "TipSyncServer", "TipSyncAgent", "TipSyncTestSupport",
                tool("ArgumentParser", "swift-argument-parser"),
                tool("CompressNIO", "compress-nio"),
                tool("Prometheus", "swift-prometheus"),
                tool("PostgresNIO", "postgres-nio"),
                tool("NIOHTTP1", "swift-nio"),
                tool("NIOPosix", "swift-nio"),
                tool("AsyncHTTPClient", "async-http-client"),
            ]
        ),
        // The server's connections: channel setup, guards and timeouts, keep-alive, idle connections,
        // and a stream written from its connection's pipeline. Knows HTTP and SwiftNIO, not the sync
        // server's routes, storage or live streams.
        .target(
            name: "TipSyncNetworking",
            dependencies: [
                "TipSyncCore",
                tool("Hummingbird", "hummingbird"),
                tool("HummingbirdCore", "hummingbird"),
                tool("Logging", "swift-log"),
                tool("Metrics", "swift-metrics"),
                tool("NIOCore", "swift-nio"),
                tool("NIOHTTP1", "swift-nio"),
                tool("NIOHTTPTypes", "swift-nio-extras"),
                tool("NIOHTTPTypesHTTP1", "swift-nio-extras"),
            ]
        ),
        // What every layer of the server shares (the protocol's error, metrics, dates and durations,
        // logging, periodic work, process usage) and its body coding (gzip and deflate, bounded).
        .target(
            name: "TipSyncServerBasics",
            dependencies: [
                "TipSyncCore",
                "TipSyncNetworking",
                "CZlib",
                tool("Hummingbird", "hummingbird"),
                tool("Logging", "swift-log"),
                tool("Metrics", "swift-metrics"),
                tool("Prometheus", "swift-prometheus"),
                tool("NIOCore", "swift-nio"),
                tool("ServiceLifecycle", "swift-service-lifecycle"),
                tool("UnixSignals", "swift-service-lifecycle"),
            ]
        ),
        // The server's storage as the services see it: the ports (`ChangeLogStore`, `IdentityStore`,
        // `InsightStore`, `SyncStore`), the records they read and write, and the policy every backend
        // shares, as named services over the narrowest port. No database library reaches it.
        .target(
            name: "TipSyncStorage",
            dependencies: [
                "TipSyncCore",
                "TipSyncServerBasics",
                tool("Crypto", "swift-crypto"),
                tool("NIOCore", "swift-nio"),
                tool("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        // The SQLite backend: one file, a writer with group commit, background checkpoints.
        .target(
            name: "TipSyncSQLiteStorage",
            dependencies: [
                "TipSyncCore",
                "TipSyncServerBasics",
                "TipSyncStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
                tool("NIOCore", "swift-nio"),
            ]
        ),
        // The PostgreSQL backend: a connection pool, many server instances on one database.
        .target(
            name: "TipSyncPostgresStorage",
            dependencies: [
                "TipSyncCore",
                "TipSyncServerBasics",
                "TipSyncStorage",
                tool("Logging", "swift-log"),
                tool("NIOCore", "swift-nio"),
                tool("NIOPosix", "swift-nio"),
                tool("PostgresNIO", "postgres-nio"),
                tool("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        // The device service: what a device's requests meet. The sync routes (push, pull, live, devices,
        // account), live streams and their notifications, authentication, limits, compaction, insights
        // learned from traffic, the one middleware list.
        .target(
            name: "TipSyncDeviceService",
            dependencies: [
                "TipSyncCore",
                "TipSyncNetworking",
                "TipSyncServerBasics",
                "TipSyncStorage",
                tool("Hummingbird", "hummingbird"),
                tool("HummingbirdCore", "hummingbird"),
                tool("JWTKit", "jwt-kit"),
                tool("Logging", "swift-log"),
                tool("Metrics", "swift-metrics"),
                tool("NIOCore", "swift-nio"),
                tool("NIOEmbedded", "swift-nio"),
                tool("NIOPosix", "swift-nio"),
                tool("NIOSSL", "swift-nio-ssl"),
                tool("Prometheus", "swift-prometheus"),
                tool("ServiceLifecycle", "swift-service-lifecycle"),
                tool("UnixSignals", "swift-service-lifecycle"),
            ]
        ),
        // The operator service: catalog delivery and upload, the admin API, experiments and their
        // results, the console. Built on the device service, never used by it.
        .target(
            name: "TipSyncOperatorService",
            dependencies: [
                "TipSyncCore",
                "TipSyncDeviceService",
                "TipSyncServerBasics",
                "TipSyncStorage",
                tool("Crypto", "swift-crypto"),
                tool("Hummingbird", "hummingbird"),
                tool("Logging", "swift-log"),
                tool("Mustache", "swift-mustache"),
                tool("NIOCore", "swift-nio"),
                tool("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        // The composition root: the server's settings (read once, here) and `buildApplication` (what
        // tests call), which wires the device and operator services; who imports it gets the whole
        // server library.
        .target(
            name: "TipSyncServer",
            dependencies: [
                "TipSyncCore",
                "TipSyncNetworking",
                "TipSyncServerBasics",
                "TipSyncStorage",
                "TipSyncSQLiteStorage",
                "TipSyncPostgresStorage",
                "TipSyncDeviceService",
                "TipSyncOperatorService",
                tool("Configuration", "swift-configuration"),
                tool("Hummingbird", "hummingbird"),
                tool("HummingbirdCore", "hummingbird"),
                tool("HummingbirdTLS", "hummingbird"),
                tool("NIOSSL", "swift-nio-ssl"),
                tool("Logging", "swift-log"),
                tool("Metrics", "swift-metrics"),
                tool("NIOCore", "swift-nio"),
                tool("Prometheus", "swift-prometheus"),
                tool("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "tipsync-server",
            dependencies: [
                "TipSyncServer", "TipSyncCore",
                tool("ArgumentParser", "swift-argument-parser"),
                tool("NIOCore", "swift-nio"),
            ],
            // mimalloc serves the server's `malloc` on Linux (Debian: libmimalloc-dev to build,
            // libmimalloc2.0 to run): after a first launch of 18,000 devices glibc's kept twice the
            // memory of a restart, freed pages pinned by the streams' objects among them
            // (BENCHMARKS.md, "mimalloc instead of glibc's malloc"). Linked, not preloaded, so every
            // way of running the server gets it; `/metrics`' `tipsync_allocator_info` says which
            // allocator answers. Only this executable (and the tests that link it): never the library.
            linkerSettings: [.linkedLibrary("mimalloc", .when(platforms: [.linux]))]
        ),
        // The per-device agent as a library: store layout, operations, the local API, the daemon.
        .target(
            name: "TipSyncAgent",
            dependencies: [
                "TipSync",
                tool("NIOCore", "swift-nio"),
                tool("NIOPosix", "swift-nio"),
                tool("Logging", "swift-log"),
                tool("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "tipsync-agent",
            dependencies: [
                "TipSyncAgent",
                tool("ArgumentParser", "swift-argument-parser"),
            ]
        ),
        // Conflict replay: histories, the replayer over real replicas and the in-process server, the
        // generator, the shrinker. Test and tool code; never linked into apps.
        .target(
            name: "TipSyncSimulation",
            dependencies: [
                "TipSync", "TipSyncServer", "TipSyncSQLiteStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
                tool("Hummingbird", "hummingbird"),
                tool("HTTPTypes", "swift-http-types"),
                tool("NIOEmbedded", "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "tipsync-sim",
            dependencies: [
                "TipSyncSimulation", "TipSyncOperatorService",
                tool("ArgumentParser", "swift-argument-parser"),
            ]
        ),
        // Test-only helpers shared by test targets: a throwaway PostgreSQL, a seeded generator, process
        // waits, a slow network link.
        .target(
            name: "TipSyncTestSupport",
            dependencies: [
                "TipSyncCore", tool("PostgresNIO", "postgres-nio"), tool("NIOCore", "swift-nio"),
                tool("NIOPosix", "swift-nio"),
            ]
        ),
        .testTarget(name: "TipSyncCoreTests", dependencies: ["TipSyncCore", "TipSyncTestSupport"]),
        // The connection layer alone: its state machines, and its handlers on `EmbeddedChannel`.
        .testTarget(
            name: "TipSyncNetworkingTests",
            dependencies: [
                "TipSyncNetworking",
                tool("Hummingbird", "hummingbird"),
                tool("HTTPTypes", "swift-http-types"),
                tool("Metrics", "swift-metrics"),
                tool("NIOCore", "swift-nio"),
                tool("NIOEmbedded", "swift-nio"),
                tool("NIOHTTP1", "swift-nio"),
                tool("NIOHTTPTypes", "swift-nio-extras"),
                tool("NIOHTTPTypesHTTP1", "swift-nio-extras"),
            ]
        ),
        .testTarget(
            name: "TipSyncSimulationTests",
            dependencies: ["TipSyncSimulation", "TipSync", "TipSyncCore", "TipSyncTestSupport"],
            resources: [.copy("Histories")]
        ),
        .testTarget(
            name: "TipSyncAgentTests",
            dependencies: [
                "TipSyncAgent", "TipSyncServer", "TipSyncTestSupport", "tipsync-agent", "tipsync-server",
                "tipsync-walkthrough", "tipsync-export-example", tool("Logging", "swift-log"),
            ],
            resources: [.copy("Fixtures")]
        ),
        // Server test helpers every server test target shares: a store with tokens (`ServerFixture`),
        // a server on a real socket (`LiveServer`) and raw connections to it, the storage backends to
        // run a contract on, gated stores, clocks moved by hand, log capture.
        .target(
            name: "TipSyncServerTestSupport",
            dependencies: [
                "TipSyncServer", "TipSyncDeviceService", "TipSync", "TipSyncCore", "TipSyncTestSupport",
                tool("Hummingbird", "hummingbird"),
                tool("HummingbirdTesting", "hummingbird"),
                tool("Logging", "swift-log"),
                tool("NIOCore", "swift-nio"),
                tool("Prometheus", "swift-prometheus"),
                tool("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        // One test target per server module, named for what it tests; what starts processes, Chromium
        // or several PostgreSQL instances is `TipSyncEndToEndTests`.
        .testTarget(name: "TipSyncServerBasicsTests", dependencies: serverTestDependencies),
        .testTarget(name: "TipSyncStorageTests", dependencies: serverTestDependencies),
        .testTarget(name: "TipSyncDeviceServiceTests", dependencies: serverTestDependencies),
        .testTarget(name: "TipSyncOperatorServiceTests", dependencies: serverTestDependencies),
        // The composition root: the settings, and every route and service as `buildApplication` wires them.
        .testTarget(name: "TipSyncServerTests", dependencies: serverTestDependencies),
        .testTarget(name: "TipSyncEndToEndTests", dependencies: serverTestDependencies),
        .testTarget(
            name: "TipSyncTests",
            dependencies: ["TipSync", "TipSyncTestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

/// A product only the tools use (the server, the agent, the simulator, the benchmarks, the tests):
/// with the `Tools` trait off, SwiftPM neither links nor downloads its package.
func tool(_ name: String, _ package: String) -> Target.Dependency {
    .product(name: name, package: package, condition: .when(traits: ["Tools"]))
}

// Every target of the package is compiled with the upcoming features Swift 7 will turn on (as
// Hummingbird does): `any` spelled out for existentials, members visible only from modules a file
// imports itself, and imports internal unless a file says otherwise.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + upcomingFeatures
}
