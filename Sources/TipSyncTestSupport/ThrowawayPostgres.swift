import Foundation
import Logging
import PostgresNIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL for tests: `TIPSYNC_TEST_POSTGRES` (a server URL whose user may create databases)
/// when set, otherwise a throwaway server this test process starts once — `initdb` into a temporary
/// directory and `pg_ctl start` on a free port (as the `postgres` user when running as root) — and
/// stops at exit. Each caller gets a fresh database. Never skipped: if PostgreSQL cannot be started
/// the error says why (`scripts/test` installs it when missing).
public enum ThrowawayPostgres {
    private static let server = ServerBox()

    /// A new, empty database: `postgres://user@127.0.0.1:PORT/NAME`.
    public static func freshDatabase() async throws -> String {
        let base = try await server.url()
        guard var components = URLComponents(string: base) else { throw Failure("bad URL \(base)") }
        let name = "tipsync_test_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
        components.path = "/postgres"
        let client = PostgresClient(
            configuration: .init(
                host: components.host ?? "127.0.0.1", port: components.port ?? 5432,
                username: components.user ?? "postgres", password: components.password, database: "postgres",
                tls: .disable))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        components.path = "/" + name
        return components.string!
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Starts the throwaway server on first use.
    final class ServerBox: Sendable {
        private let started = Mutex<Task<String, any Error>?>(nil)

        func url() async throws -> String {
            let task = started.withLock { task in
                if let task { return task }
                // initdb and pg_ctl block for seconds: on a thread of their own, never on one of the
                // few threads every test task shares (blocking one stalled the whole suite).
                let new = Task {
                    try await withCheckedThrowingContinuation { continuation in
                        Thread.detachNewThread { continuation.resume(with: Result { try ThrowawayPostgres.start() }) }
                    }
                }
                task = new
                return new
            }
            return try await task.value
        }
    }

    /// The data directory to stop at exit.
    private static let running = Mutex<String?>(nil)

    static func start() throws -> String {
        if let url = ProcessInfo.processInfo.environment["TIPSYNC_TEST_POSTGRES"], !url.isEmpty { return url }
        guard let bin = binDirectory() else {
            throw Failure(
                "PostgreSQL is needed for these tests and was not found (no initdb on PATH or in /usr/lib/postgresql/*/bin); "
                    + "install it (`apt-get install postgresql`) or set TIPSYNC_TEST_POSTGRES")
        }
        let directory = "/tmp/tipsync-pg-\(getpid())-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let asRoot = geteuid() == 0
        if asRoot { try run("/bin/chown", ["postgres", directory], as: nil) }
        let data = directory + "/data"
        try run(
            bin + "/initdb", ["-D", data, "-U", "tipsync", "--auth=trust", "-E", "UTF8", "--no-sync"],
            as: asRoot ? "postgres" : nil)
        let port = FreePort.next()
        try run(
            bin + "/pg_ctl",
            [
                "-D", data, "-l", directory + "/server.log", "-w", "-t", "60", "-o",
                "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
                "start",
            ], as: asRoot ? "postgres" : nil)
        running.withLock { $0 = data }
        atexit {
            guard let data = ThrowawayPostgres.running.withLock({ $0 }), let bin = ThrowawayPostgres.binDirectory()
            else { return }
            try? ThrowawayPostgres.run(
                bin + "/pg_ctl", ["-D", data, "-m", "immediate", "stop"], as: geteuid() == 0 ? "postgres" : nil)
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: data).deletingLastPathComponent().path)
        }
        return "postgres://tipsync@127.0.0.1:\(port)/postgres"
    }

    static func binDirectory() -> String? {
        let versions =
            ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        for version in versions
        where FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\(version)/bin/initdb") {
            return "/usr/lib/postgresql/\(version)/bin"
        }
        for path in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(path)/initdb") {
            return String(path)
        }
        return nil
    }

    /// Runs a tool to completion with posix_spawn + waitpid (Foundation's Process can miss the exit
    /// of a tool that leaves a daemon behind, as `pg_ctl start` does); output goes to a file.
    static func run(_ tool: String, _ arguments: [String], as user: String?) throws {
        let argv = (user.map { ["/usr/sbin/runuser", "-u", $0, "--", tool] } ?? [tool]) + arguments
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-pg-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The server pg_ctl leaves running must not hold this process's sockets until the suite ends.
        closeInheritedDescriptors(from: 3, &actions)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw Failure("cannot run \(argv[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw Failure("\(argv.joined(separator: " ")) failed (status \(status)): \(text)")
        }
    }
}
