import ArgumentParser
import Foundation
import GRDB

/// What one durable write transaction costs by itself on this machine: a SQLite database in WAL
/// mode with the server's settings and a table shaped like its change log, each transaction
/// inserting one row and moving a counter, as a single-change push does. Run on the calling thread
/// (`pool.write` synchronously) and from Swift tasks (`await pool.write`: the hop to GRDB's writer
/// queue and back), one writer at a time. The floor under `push-ingest --store-only --devices 1`.
struct CommitFloor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "commit-floor")
    @Option var transactions = 20_000

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tipsync-bench-commit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try await FloorMeasurement.database(
            at: directory.appendingPathComponent("floor.sqlite").path)
        let body = String(repeating: "x", count: 160)
        @Sendable func write(_ db: Database, _ n: Int) throws {
            try db.cachedStatement(sql: "UPDATE counter SET next = ? WHERE id = 1").execute(arguments: [n])
            try db.cachedStatement(
                sql:
                    "INSERT INTO change (account, position, device, seq, hlc, kind, body) VALUES (1, ?, 'd', ?, ?, 'donation', ?)"
            ).execute(arguments: [n, n, n, body])
        }
        /// GRDB's synchronous `write` (an async context would choose its async overload).
        func writeOnThisThread(_ n: Int) throws { try pool.write { try write($0, n) } }
        var cpu = processCPUSeconds()
        for n in 1...transactions { try writeOnThisThread(n) }
        let onThread = processCPUSeconds() - cpu
        cpu = processCPUSeconds()
        for n in (transactions + 1)...(2 * transactions) { try await pool.write { try write($0, n) } }
        let fromTasks = processCPUSeconds() - cpu
        print(
            "commit-floor transactions=\(transactions): "
                + "\(format(onThread / Double(transactions) * 1_000_000, 1)) µs CPU per transaction on the calling thread, "
                + "\(format(fromTasks / Double(transactions) * 1_000_000, 1)) µs from a Swift task (await pool.write)")
    }
}
