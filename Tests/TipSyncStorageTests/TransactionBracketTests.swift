import Foundation
import GRDB
import Testing
import TipSyncTestSupport

@testable import TipSyncSQLiteStorage

/// A read of the SQLite store runs in a transaction of its own whose `BEGIN` and `COMMIT` are
/// prepared once per connection (``TransactionBracket``): what must hold is what GRDB's
/// `DatabasePool.read` promised — one snapshot for the whole read, and a connection left outside any
/// transaction whatever the read does.
@Suite struct TransactionBracketTests {
    let pool: DatabasePool

    init() throws {
        pool = try DatabasePool(path: Scratch.path("transaction-bracket", pathExtension: "sqlite").path)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY); INSERT INTO item (id) VALUES (1)")
        }
    }

    @Test func aReadSeesOneSnapshotWhileTheWriterCommits() throws {
        let counts = try pool.unsafeRead { db in
            try TransactionBracket.read(db) { db -> (Int, Int) in
                let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? -1
                // A commit between the read's two statements: the read's snapshot does not see it.
                try pool.write { try $0.execute(sql: "INSERT INTO item (id) VALUES (2)") }
                let after = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? -1
                return (before, after)
            }
        }
        #expect(counts == (1, 1))
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } == 2)
    }

    @Test func aReadThatThrowsLeavesItsConnectionOutsideATransaction() throws {
        struct Refused: Error {}
        let outside = try pool.unsafeRead { db -> Bool in
            #expect(throws: Refused.self) {
                try TransactionBracket.read(db) { db in
                    #expect(db.isInsideTransaction)
                    throw Refused()
                }
            }
            return !db.isInsideTransaction
        }
        #expect(outside)
    }

    @Test func theBracketsStatementsArePreparedOncePerConnection() throws {
        let prepared = try pool.unsafeRead { db -> [Bool] in
            // Statements the bracket prepared are the ones its next read runs again.
            try TransactionBracket.read(db) { _ in }
            let begin = try db.cachedStatement(sql: TransactionBracket.beginDeferred.rawValue)
            let commit = try db.cachedStatement(sql: TransactionBracket.commit.rawValue)
            try TransactionBracket.read(db) { _ in }
            return [
                begin === (try db.cachedStatement(sql: TransactionBracket.beginDeferred.rawValue)),
                commit === (try db.cachedStatement(sql: TransactionBracket.commit.rawValue)),
            ]
        }
        #expect(prepared == [true, true])
    }
}
