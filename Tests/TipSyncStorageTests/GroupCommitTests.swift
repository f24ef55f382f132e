import Foundation
import GRDB
import Synchronization
import Testing
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Writes that arrive while the writer is busy share its next transaction (``GroupCommit``). What
/// must hold: each write's result is its own, one that fails is undone alone, and none is reported
/// stored unless its group committed.
@Suite(.timeLimit(.minutes(5))) struct GroupCommitTests {
    /// A database with one table, a count of the transactions that committed, and a way to hold the
    /// writer busy while writes queue up.
    struct Database {
        let pool: DatabasePool
        let groups: GroupCommit
        let commits = CommitCounter()

        init() throws {
            let path = Scratch.path("group-commit", pathExtension: "sqlite").path
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            pool = try DatabasePool(path: path, configuration: configuration)
            try pool.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE parent (id INTEGER PRIMARY KEY);
                        CREATE TABLE item (
                            name TEXT PRIMARY KEY NOT NULL,
                            parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
                        INSERT INTO parent (id) VALUES (1);
                        """)
            }
            pool.add(transactionObserver: commits, extent: .databaseLifetime)
            groups = GroupCommit(pool: pool)
        }

        /// Occupies the writer until the returned gate opens: writes issued meanwhile wait for it.
        func holdWriter() -> DispatchSemaphore {
            let gate = DispatchSemaphore(value: 0)
            pool.asyncWriteWithoutTransaction { _ in gate.wait() }
            return gate
        }

        /// Inserts `name` through the group commit and returns how many items the transaction saw.
        func insert(_ name: String, parent: Int64 = 1) async throws -> Int {
            try await groups.write { db in
                try db.execute(sql: "INSERT INTO item (name, parent) VALUES (?, ?)", arguments: [name, parent])
                return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item")!
            }
        }

        func names() throws -> [String] {
            try pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM item ORDER BY name") }
        }

        /// Returns once `count` writes wait for the writer (they queue as their tasks start).
        func untilWaiting(_ count: Int) async {
            while groups.waitingCount < count { await Task.yield() }
        }
    }

    final class CommitCounter: TransactionObserver, Sendable {
        private let count = Mutex(0)
        var commits: Int { count.withLock { $0 } }
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: GRDB.Database) { count.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: GRDB.Database) {}
    }

    @Test func aLoneWriteCommitsAtOnce() async throws {
        let database = try Database()
        #expect(try await database.insert("a") == 1)
        #expect(try await database.insert("b") == 2)
        #expect(try database.names() == ["a", "b"])
        #expect(database.commits.commits == 2)
    }

    struct Refused: Error {}

    /// A write alone in its transaction runs without a savepoint of its own: when it throws after
    /// writing, its whole transaction is rolled back, and nothing of it stays.
    @Test func aLoneWriteThatThrowsAfterWritingLeavesNothing() async throws {
        let database = try Database()
        await #expect(throws: Refused.self) {
            try await database.groups.write { db in
                try db.execute(sql: "INSERT INTO item (name, parent) VALUES ('partial', 1)")
                throw Refused()
            }
        }
        #expect(try database.names() == [])
        #expect(database.commits.commits == 0)
        #expect(try await database.insert("after") == 1)
        #expect(try database.names() == ["after"])
    }

    @Test func writesThatArriveWhileTheWriterIsBusyShareOneTransaction() async throws {
        let database = try Database()
        let gate = database.holdWriter()
        let names = (0..<10).map { "item-\($0)" }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for name in names { group.addTask { try await database.insert(name) } }
            await database.untilWaiting(names.count)
            #expect(database.commits.commits == 0)
            gate.signal()
            // Each write saw the ones before it in the same transaction: counts 1…10, each once.
            var seen: [Int] = []
            for try await count in group { seen.append(count) }
            #expect(seen.sorted() == Array(1...10))
        }
        #expect(try database.names() == names.sorted())
        // The first write found the writer busy too and waited with the rest: one transaction.
        #expect(database.commits.commits == 1)
    }

    @Test func aWriteThatThrowsIsUndoneAloneAndTheRestCommit() async throws {
        let database = try Database()
        try await database.pool.write { db in try db.execute(sql: "INSERT INTO item (name) VALUES ('taken')") }
        let gate = database.holdWriter()
        let results = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            for name in ["a", "taken", "b"] {
                group.addTask {
                    do {
                        _ = try await database.insert(name)
                        return (name, true)
                    } catch {
                        return (name, false)
                    }
                }
            }
            await database.untilWaiting(3)
            gate.signal()
            return try await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
        }
        #expect(results == ["a": true, "taken": false, "b": true])
        #expect(try database.names() == ["a", "b", "taken"])
        #expect(database.commits.commits == 2)
    }

    /// How many times each named write ran.
    final class Runs: Sendable {
        private let counts = Mutex<[String: Int]>([:])
        var all: [String: Int] { counts.withLock { $0 } }
        func ran(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
    }

    /// Writes in a group have no savepoint each: one that throws after writing takes its group's
    /// transaction down with it, and the others run in a new one (those before it a second time),
    /// while one refused before it wrote anything costs the others nothing.
    @Test(arguments: [true, false])
    func aWriteThatThrowsAfterWritingIsUndoneAndTheOthersRunAgain(_ throwsAfterWriting: Bool) async throws {
        let database = try Database()
        let runs = Runs()
        let gate = database.holdWriter()
        let results = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            for (index, name) in ["a", "refused", "b"].enumerated() {
                group.addTask {
                    do {
                        try await database.groups.write { db in
                            runs.ran(name)
                            if name != "refused" || throwsAfterWriting {
                                try db.execute(sql: "INSERT INTO item (name, parent) VALUES (?, 1)", arguments: [name])
                            }
                            if name == "refused" { throw Refused() }
                        }
                        return (name, true)
                    } catch {
                        return (name, false)
                    }
                }
                await database.untilWaiting(index + 1)  // in this order
            }
            gate.signal()
            return try await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
        }
        #expect(results == ["a": true, "refused": false, "b": true])
        #expect(runs.all == ["a": throwsAfterWriting ? 2 : 1, "refused": 1, "b": 1])
        #expect(try database.names() == ["a", "b"])
        #expect(database.commits.commits == 1)
    }

    /// A deferred foreign key is checked at `COMMIT`: the group's commit fails after every write in it
    /// succeeded on its own. None may be reported stored, and none is.
    @Test func whenTheGroupsCommitFailsEveryWriteInItFails() async throws {
        let database = try Database()
        let gate = database.holdWriter()
        let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await database.insert("a")) == nil }
            group.addTask { (try? await database.insert("orphan", parent: 99)) == nil }
            group.addTask { (try? await database.insert("b")) == nil }
            await database.untilWaiting(3)
            gate.signal()
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(failures == [true, true, true])
        #expect(try database.names() == [])
        // The writer is fine afterwards.
        #expect(try await database.insert("c") == 1)
    }

    @Test func groupsAreBoundedAndTheRestFollow() async throws {
        let database = try Database()
        let gate = database.holdWriter()
        let count = GroupCommit.largestGroup * 2 + 1
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<count { group.addTask { try await database.insert("item-\(index)") } }
            await database.untilWaiting(count)
            gate.signal()
            for try await _ in group {}
        }
        #expect(try database.names().count == count)
        #expect(database.commits.commits == 3)
    }
}
