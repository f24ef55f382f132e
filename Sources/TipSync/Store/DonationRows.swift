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
/// docs/benchmark-history.md "Cold start").
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
    /// The pending rows' texts, four a row (event, id, info, device), one after another: bound in
    /// place when the rows are written. Each row's values are copied here as it is appended, so
    /// no row is kept (a kept row is a copy, retaining its strings and payload).
    private var texts: [UInt8] = []
    /// Where each pending text is in ``texts``; nil binds NULL (a donation without a payload).
    private var spans: [(start: Int, count: Int)?] = []
    /// Each pending row's date and HLC.
    private var numbers: [(date: Int64, hlc: Int64)] = []

    init() {
        texts.reserveCapacity(Self.perStatement * 64)
        spans.reserveCapacity(Self.perStatement * 4)
        numbers.reserveCapacity(Self.perStatement)
    }

    /// Adds a row; writes a full statement's worth when it has one.
    mutating func append(_ row: Row, _ db: Database) throws {
        add(row.event)
        add(row.id)
        if let info = row.info {
            let start = texts.count
            // Written straight into the buffer: no string is made for the payload's text.
            info.appendCanonicalText(to: &texts)
            spans.append((start, texts.count - start))
        } else {
            spans.append(nil)
        }
        add(row.stamp.device)
        numbers.append((row.date, row.stamp.hlc.rawValue))
        if numbers.count == Self.perStatement { try flush(db) }
    }

    private mutating func add(_ text: String) {
        var text = text
        let start = texts.count
        text.withUTF8 { texts.append(contentsOf: $0) }
        spans.append((start, texts.count - start))
    }

    /// Writes what is pending.
    mutating func flush(_ db: Database) throws {
        guard !numbers.isEmpty else { return }
        // Full statements are reused; the last, shorter one of a batch is prepared once.
        let statement =
            numbers.count == Self.perStatement
            ? try db.cachedStatement(sql: Self.fullStatement) : try db.makeStatement(sql: Self.sql(rows: numbers.count))
        // Every text is bound in place (SQLITE_STATIC) while the buffer lives: binding each as
        // SQLITE_TRANSIENT had SQLite allocate and copy every value (its allocator takes a lock
        // each time), which cost more than inserting the rows.
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
            for (date, hlc) in numbers {
                try bindText()  // event
                try bindText()  // id
                try bind(date)
                try bindText()  // info
                try bind(hlc)
                try bindText()  // device
            }
            let code = sqlite3_step(handle)
            // The bound texts point into `texts`, which is emptied next: unbind them before
            // anything else can step this statement.
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            return code
        }
        guard code == SQLITE_DONE else { throw Self.error(code, db) }
        texts.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        numbers.removeAll(keepingCapacity: true)
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
