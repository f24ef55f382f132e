import Foundation
import GRDB

/// What the floor measurements share (`request-floor`, `commit-floor`, `nio-floor`): a database shaped
/// like the server's change log, and the load of devices sending requests one after the other.
enum FloorMeasurement {
    /// A SQLite database in WAL mode with the server's settings, a counter and a table shaped like the
    /// server's change log (a row under two indexes per change).
    static func database(at path: String) async throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try await pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE counter (id INTEGER PRIMARY KEY, next INTEGER NOT NULL);
                    INSERT INTO counter (id, next) VALUES (1, 0);
                    CREATE TABLE change (
                        account INTEGER NOT NULL, position INTEGER NOT NULL, device TEXT NOT NULL,
                        seq INTEGER NOT NULL, hlc INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
                        PRIMARY KEY (account, position), UNIQUE (account, device, seq));
                    """)
        }
        return pool
    }

    /// `devices` threads, each sending `perDevice` requests one after the other over one keep-alive
    /// connection, each answered `200`. Returns how many were sent, the wall time, and the server's
    /// CPU seconds: the process's less the threads'.
    static func drive(
        port: Int, devices: Int, perDevice: Int, method: String, path: String, body: [UInt8] = []
    ) async throws -> (requests: Int, seconds: Double, serverCPU: Double) {
        let cpuBefore = processCPUSeconds()
        let clock = ContinuousClock()
        let start = clock.now
        let generatorCPU = try await withThrowingTaskGroup(of: Double.self) { group in
            for _ in 0..<devices {
                group.addTask {
                    try await onThread {
                        let connection = try HTTPConnection(port: port)
                        for _ in 0..<perDevice {
                            let (status, _, _, _) = try connection.exchange(method, path, headers: [], body: body)
                            guard status == 200 else { throw BenchError("\(path) answered \(status)") }
                        }
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        let seconds = (clock.now - start).milliseconds / 1000
        return (perDevice * devices, seconds, processCPUSeconds() - cpuBefore - generatorCPU)
    }
}
