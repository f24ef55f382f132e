import GRDB

#if canImport(SQLite3)
    import SQLite3
#else
    import GRDBSQLite
#endif

extension Database {
    /// Runs `body` with SQLite answering `SQLITE_BUSY` at once where a lock another connection holds
    /// would have made it wait out the configured busy timeout; the timeout applies again after.
    func withoutBusyWait<T>(_ body: (Database) throws -> T) rethrows -> T {
        guard case .timeout(let seconds) = configuration.busyMode, let connection = sqliteConnection else {
            return try body(self)
        }
        sqlite3_busy_timeout(connection, 0)
        defer { sqlite3_busy_timeout(connection, Int32(seconds * 1000)) }
        return try body(self)
    }
}
