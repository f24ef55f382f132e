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
        // Full statements are reused; the last, shorter one of a batch is prepared once.
        let statement =
            pending.count == Self.perStatement
            ? try db.cachedStatement(sql: Self.fullStatement) : try db.makeStatement(sql: Self.sql(rows: pending.count))
        // Every text goes into one buffer first, bound in place (SQLITE_STATIC) while the buffer
        // lives: binding each as SQLITE_TRANSIENT had SQLite allocate and copy every value (its
        // allocator takes a lock each time), which cost more than inserting the rows.
        var texts: [UInt8] = []
        texts.reserveCapacity(pending.count * 64)
        var spans: [(start: Int, count: Int)?] = []
        spans.reserveCapacity(pending.count * 4)
        func add(_ text: String?) {
            guard var text else { return spans.append(nil) }
            let start = texts.count
            text.withUTF8 { texts.append(contentsOf: $0) }
            spans.append((start, texts.count - start))
        }
        for row in pending {
            add(row.event)
            add(row.id)
            add(row.info?.canonicalText)
            add(row.stamp.device)
        }
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        let code = try texts.withUnsafeBufferPointer { buffer -> Int32 in
            var column: Int32 = 0
            var span = 0
            func check(_ code: Int32) throws {
                guard code == SQLITE_OK else { throw Self.error(code, db) }
            }
            func bindText() throws {
                column += 1
                defer { span += 1 }
                guard let (start, count) = spans[span] else { return try check(sqlite3_bind_null(handle, column)) }
                // An empty text may have no address; a null pointer would bind NULL, not "".
                let bytes = count == 0 ? Self.empty() : UnsafeRawPointer(buffer.baseAddress! + start)
                try check(
                    sqlite3_bind_text(
                        handle, column, bytes.assumingMemoryBound(to: CChar.self), Int32(count), Self.static))
            }
            func bind(_ number: Int64) throws {
                column += 1
                try check(sqlite3_bind_int64(handle, column, number))
            }
            for row in pending {
                try bindText()  // event
                try bindText()  // id
                try bind(row.date)
                try bindText()  // info
                try bind(row.stamp.hlc.rawValue)
                try bindText()  // device
            }
            let code = sqlite3_step(handle)
            // The bound texts point into `texts`, which goes away: unbind them before anything else
            // can step this statement.
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            return code
        }
        guard code == SQLITE_DONE else { throw Self.error(code, db) }
        pending.removeAll(keepingCapacity: true)
    }

    /// The statement for `rows` rows.
    private static func sql(rows: Int) -> String {
        "INSERT OR IGNORE INTO donation (eventID, id, date, info, hlc, device) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }

    private static let fullStatement = sql(rows: perStatement)

    /// SQLITE_STATIC: the bytes stay where they are until the statement is done with them.
    private static let `static` = unsafeBitCast(0, to: sqlite3_destructor_type.self)

    /// A C string "" (constant storage).
    private static func empty() -> UnsafeRawPointer {
        let empty: StaticString = ""
        return UnsafeRawPointer(empty.utf8Start)
    }

    private static func error(_ code: Int32, _ db: Database) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage,
            sql: "INSERT OR IGNORE INTO donation")
    }
}
