import GRDB
import TipSyncCore

#if canImport(SQLite3)
    import SQLite3
#else
    import GRDBSQLite
#endif

/// Donation rows written in multi-row `INSERT OR IGNORE`s, each value bound straight into SQLite.
/// A pull page writes thousands of them: through `StatementArguments` every value was boxed and
/// every string copied into a C string, which cost more than SQLite's own work (measured,
/// BENCHMARKS.md "Cold start").
struct DonationRows {
    /// One `donation` row as a change carries it.
    struct Row {
        var event: String
        var id: String
        var date: Int64
        var info: JSONValue?
        var stamp: Stamp
    }

    static let perStatement = 100
    private var pending: [Row] = []

    init() {
        pending.reserveCapacity(Self.perStatement)
    }

    /// Adds a row; writes a full statement's worth when it has one.
    mutating func append(_ row: Row, _ db: Database) throws {
        pending.append(row)
        if pending.count == Self.perStatement { try flush(db) }
    }

    /// Writes what is pending.
    mutating func flush(_ db: Database) throws {
        guard !pending.isEmpty else { return }
        let placeholders = Array(repeating: "(?, ?, ?, ?, ?, ?)", count: pending.count).joined(separator: ", ")
        let sql = "INSERT OR IGNORE INTO donation (eventID, id, date, info, hlc, device) VALUES " + placeholders
        // Full statements are reused; the last, shorter one of a batch is prepared once.
        let statement =
            pending.count == Self.perStatement ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        var column: Int32 = 0
        func check(_ code: Int32) throws {
            guard code == SQLITE_OK else { throw Self.error(code, db) }
        }
        func bind(_ text: String?) throws {
            column += 1
            guard var text else { return try check(sqlite3_bind_null(handle, column)) }
            let code = text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { characters in
                    // SQLITE_TRANSIENT: SQLite copies the bytes before this returns. An empty string
                    // may have no address; a null pointer would bind NULL, not "".
                    sqlite3_bind_text(
                        handle, column, characters.baseAddress ?? Self.empty(), Int32(characters.count), Self.transient)
                }
            }
            try check(code)
        }
        func bind(_ number: Int64) throws {
            column += 1
            try check(sqlite3_bind_int64(handle, column, number))
        }
        for row in pending {
            try bind(row.event)
            try bind(row.id)
            try bind(row.date)
            try bind(row.info?.canonicalText)
            try bind(row.stamp.hlc.rawValue)
            try bind(row.stamp.device)
        }
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw Self.error(code, db) }
        pending.removeAll(keepingCapacity: true)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// A C string "" (constant storage).
    private static func empty() -> UnsafePointer<CChar> {
        let empty: StaticString = ""
        return UnsafeRawPointer(empty.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    private static func error(_ code: Int32, _ db: Database) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage,
            sql: "INSERT OR IGNORE INTO donation")
    }
}
