import GRDB

/// The statements that open and close a transaction, prepared once per connection and run again.
/// GRDB's `read` and `inTransaction` have SQLite parse `BEGIN` and `COMMIT` on every call — the
/// parse, GRDB's authorizer callbacks and the statement's finalization, for every pull and every
/// stream's first page (BENCHMARKS.md, "A read's transaction prepared once").
enum TransactionBracket: String {
    /// A writer's group: the write lock from the start.
    case beginImmediate = "BEGIN IMMEDIATE TRANSACTION"
    /// A read: one snapshot for every statement of the read, taken at its first.
    case beginDeferred = "BEGIN DEFERRED TRANSACTION"
    case commit = "COMMIT TRANSACTION"

    func run(_ db: Database) throws { try db.cachedStatement(sql: rawValue).execute() }

    /// Runs `value` in a deferred transaction on `db` (a reader connection outside any transaction),
    /// as GRDB's `DatabasePool.read` does: every statement sees the same committed state. The
    /// transaction ends whatever `value` does (committed, or rolled back if the commit fails).
    static func read<T>(_ db: Database, _ value: (Database) throws -> T) throws -> T {
        try beginDeferred.run(db)
        defer {
            do { try commit.run(db) } catch { try? db.rollback() }
        }
        return try value(db)
    }
}

extension SQLiteSyncStore {
    /// Runs `value` on a reader connection in a transaction of its own: what GRDB's
    /// `DatabasePool.read` does, with the transaction's statements prepared once
    /// (``TransactionBracket``).
    func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await pool.unsafeRead { db in try TransactionBracket.read(db, value) }
    }
}
