package import GRDB
import TipSyncServerBasics
import TipSyncStorage

#if canImport(SQLite3)
    import SQLite3
#else
    import GRDBSQLite
#endif

/// A value bound straight through SQLite's C API (``GRDB/Statement/run(_:in:)``, ``GRDB/Statement/bind(_:in:)``).
package enum BoundValue {
    case integer(Int64)
    case text(String)
}

extension Statement {
    /// Runs the statement to its end with `values` bound through SQLite's C API. A push's statements
    /// go this way: GRDB's `StatementArguments` boxes each value in an existential and copies them
    /// into arrays, which cost the single-change push a few microseconds of its writer's time
    /// (docs/benchmark-history.md, eleventh round).
    package func run(_ values: BoundValue..., in db: Database) throws {
        _ = try step(values, in: db)
    }

    /// Whether the statement, with `values` bound through SQLite's C API, gives a row.
    package func hasRow(_ values: BoundValue..., in db: Database) throws -> Bool {
        try step(values, in: db)
    }

    /// Binds `values`, takes one step and resets: whether the step gave a row.
    private func step(_ values: [BoundValue], in db: Database) throws -> Bool {
        defer { sqlite3_reset(sqliteStatement) }
        try bind(values, in: db)
        let code = sqlite3_step(sqliteStatement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw failure(code, db) }
        return code == SQLITE_ROW
    }

    /// Resets the statement and binds `values` through SQLite's C API, for steps the caller takes
    /// (resetting it again when done).
    package func bind(_ values: [BoundValue], in db: Database) throws {
        let handle = sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .integer(let number):
                code = sqlite3_bind_int64(handle, index, number)
            case .text(let text):
                // SQLite copies the text before the call returns; its length is given (every byte counts).
                code = text.withCString {
                    sqlite3_bind_text(handle, index, $0, Int32(text.utf8.count), Self.transient)
                }
            }
            guard code == SQLITE_OK else { throw failure(code, db) }
        }
    }

    /// `SQLITE_TRANSIENT`: SQLite copies a bound value before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private func failure(_ code: Int32, _ db: Database) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: sql)
    }
}
