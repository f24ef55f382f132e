import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport
import TipSyncTestSupport

/// The server refuses or keeps what a change carries, never alters it (issue: exact protocol).
/// Each test reproduces a defect observed on the previous main.
@Suite struct ExactProtocolTests {
    static let hlc = HLC(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000), counter: 0).description

    /// One raw change pushed by `phone` as seq 1: the answer's status and body.
    static func push(_ fields: String, fixture: ServerFixture) async throws -> (HTTPResponse.Status, ByteBuffer) {
        try await fixture.app().test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: ByteBuffer(
                    string: #"{"changes":[{"device":"phone","seq":1,"hlc":"\#(hlc)",\#(fields)}]}"#)
            ) { ($0.status, $0.body) }
        }
    }

    /// Negative counts, durations and times were stored; donation ids of any form were stored; a
    /// number beyond 2^53 reached others as a different double. Each is now a 422 naming the field.
    @Test(arguments: [
        (#""kind":"display","tip":"t","count":-1,"duration":0,"lastDisplayed":0"#, "changes[0].count"),
        (#""kind":"display","tip":"t","count":1,"duration":-0.5,"lastDisplayed":0"#, "changes[0].duration"),
        (#""kind":"display","tip":"t","count":1,"duration":1,"lastDisplayed":-5"#, "changes[0].lastDisplayed"),
        (#""kind":"donation","event":"e","id":"other:1","date":0"#, "changes[0].id"),
        (#""kind":"donation","event":"e","id":"phone:1","date":-1"#, "changes[0].date"),
        (#""kind":"parameter","id":"p","value":12345678901234567890123"#, "changes[0].value"),
        (#""kind":"parameter","id":"p","value":{"a":[1,9007199254740993]}"#, "changes[0].value.a[1]"),
        (#""kind":"donation","event":"e","id":"phone:1","date":0,"info":{"n":-1e300}"#, "changes[0].info.n"),
    ])
    func outOfModelValuesAreRefusedNamingTheField(_ fields: String, _ field: String) async throws {
        let fixture = try await ServerFixture.make()
        let (status, body) = try await Self.push(fields, fixture: fixture)
        #expect(status == .unprocessableContent)
        let error = try decode(ErrorBody.self, body).error
        #expect(error.code == "invalid_change")
        #expect(error.message.hasPrefix(field + ":"), "\(error.message)")
        #expect(try await fixture.store.logCount(account: fixture.accountID) == 0)
    }

    /// Unknown keys and `"info": null` were stripped, so a newer client's fields never reached
    /// other devices; `1.0` came back as `1` only on other replicas. What is kept arrives as sent,
    /// with numbers in their one canonical form on every replica (the writer's too).
    @Test func whatIsKeptArrivesExactlyAsSent() async throws {
        let fixture = try await ServerFixture.make()
        let fields =
            #""kind":"donation","event":"e","id":"phone:1","date":5,"info":null,"priority":{"level":2.5},"z":[1]"#
        let (status, _) = try await Self.push(fields, fixture: fixture)
        #expect(status == .ok)
        try await fixture.app().test(.router) { client in
            try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")) { response in
                let text = String(buffer: response.body)
                #expect(text.contains(#""info":null"#))
                #expect(text.contains(#""priority":{"level":2.5}"#) && text.contains(#""z":[1]"#))
                let page = try decode(PullResponse.self, response.body)
                #expect(
                    page.changes[0].unknownFields == [
                        "priority": .object(["level": .double(2.5)]), "z": .array([.int(1)]),
                    ])
                guard case .donation(_, _, _, let info) = page.changes[0].operation else {
                    Issue.record("not a donation")
                    return
                }
                #expect(info == .null)
            }
        }
        // The writer keeps the canonical form it sends: 1.0 is the integer 1 everywhere.
        let phone = try makeDevice("phone")
        try phone.setParameter("ratio", to: .double(1.0))
        try phone.setParameter("half", to: .double(0.5))
        #expect(phone.parameterValue("ratio") == .int(1))
        #expect(phone.parameterValue("half") == .double(0.5))
        #expect(throws: Change.Violation.self) { try phone.setParameter("big", to: .int(9_007_199_254_740_993)) }
        #expect(phone.parameterValue("big") == .null)
    }

    /// Messages named Swift types (`expected Dictionary<String, JSONValue>`, `Cannot initialize
    /// InvalidationReason from invalid String value bored`, `expected Int64`).
    @Test(arguments: [
        (#"{"changes":{}}"#, "changes: expected an array, found an object"),
        (
            #"{"changes":[{"device":"phone","seq":1,"hlc":"\#(hlc)","kind":"eligibility","tip":"t","state":"invalidated","reason":"bored"}]}"#,
            "changes[0].reason: unknown invalidation reason 'bored'"
        ),
        (
            #"{"changes":[{"device":"phone","seq":"1","hlc":"\#(hlc)","kind":"datastoreReset"}]}"#,
            "changes[0].seq: expected an integer"
        ),
        (#"[]"#, "expected an object, found an array"),
    ])
    func errorMessagesSpeakTheProtocolNotSwift(_ request: String, _ expected: String) async throws {
        let fixture = try await ServerFixture.make()
        try await fixture.app().test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"), body: ByteBuffer(string: request)
            ) { response in
                #expect(response.status.code / 100 == 4)
                let message = try decode(ErrorBody.self, response.body).error.message
                #expect(message.contains(expected), "\(message)")
                for swiftName in [
                    "Dictionary", "Int64", "JSONValue", "InvalidationReason", "Cannot initialize", "Array<",
                ] {
                    #expect(!message.contains(swiftName), "\(message)")
                }
            }
        }
    }

    /// A stamp 301 s ahead was reported as "300 s ahead" (the limit), which reads as no violation.
    @Test func clockSkewIsReportedExactly() async throws {
        let fixture = try await ServerFixture.make()
        let now: Int64 = 1_800_000_000_000
        var configuration = ServerConfiguration()
        configuration.maxClockSkew = .seconds(300)
        try await fixture.app(configuration: configuration, now: { now }).test(.router) { client in
            for (ahead, text) in [(Int64(301_000), "301 s ahead"), (300_500, "300.5 s ahead")] {
                let ahead = change("phone", 1, .datastoreReset, ms: UInt64(now + ahead))
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                    body: try body(PushRequest(changes: [ahead]))
                ) { response in
                    let message = try decode(ErrorBody.self, response.body).error.message
                    #expect(message.contains(text) && message.contains("(limit 300 s)"), "\(message)")
                }
            }
        }
    }

    /// `GET /v1/devices/{name}` lacked `serverTime`, which every other answer carries.
    @Test func deviceAnswersCarryServerTime() async throws {
        let fixture = try await ServerFixture.make()
        try await fixture.app(now: { 1_800_000_000_123 }).test(.router) { client in
            try await client.execute(uri: "/v1/devices/phone", method: .get, headers: fixture.headers("laptop")) {
                #expect(String(buffer: $0.body) == #"{"device":"phone","highestSeq":0,"serverTime":1800000000123}"#)
            }
        }
    }

    /// Account 2's first change sat at position 25 after account 1's 24 changes: a cursor revealed
    /// other accounts' activity. An account's cursors are now the same whether or not others exist.
    @Test(arguments: Backend.allCases)
    func cursorPositionsArePerAccount(_ backend: Backend) async throws {
        func positions(withNeighbour: Bool) async throws -> [Int64] {
            try await backend.withStore { store in
                var neighbour: DeviceIdentity?
                if withNeighbour {
                    let id = try await store.createAccount(name: "neighbour")
                    _ = try await CredentialIssuance(store).createToken(accountName: "neighbour", device: "n")
                    neighbour = DeviceIdentity(accountID: id, device: "n")
                    _ = try await store.push(parameterChanges(device: "n", seqs: 1...24), from: neighbour!)
                }
                let aliceID = try await store.createAccount(name: "alice")
                _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
                let alice = DeviceIdentity(accountID: aliceID, device: "phone")
                var cursors: [Int64] = []
                for batch in [1...3, 4...4, 5...9] as [ClosedRange<Int64>] {
                    _ = try await store.push(parameterChanges(device: "phone", seqs: batch), from: alice)
                    if let neighbour {
                        _ = try await store.push(
                            parameterChanges(device: "n", seqs: (batch.lowerBound + 24)...(batch.upperBound + 24)),
                            from: neighbour)
                    }
                    var after: Int64 = 0
                    while true {
                        let page = try await store.pull(account: alice.accountID, after: after, limit: 2)
                        cursors.append(page.cursor)
                        after = page.cursor
                        if !page.more { break }
                    }
                    cursors.append(-1)
                }
                return cursors
            }
        }
        let alone = try await positions(withNeighbour: false)
        #expect(alone == [2, 3, -1, 2, 4, -1, 2, 4, 6, 8, 9, -1])
        #expect(try await positions(withNeighbour: true) == alone)
    }

    /// Databases from before per-account positions are renumbered in order, keep every change, and
    /// refuse the old cursors once (the generation rotates), so no device skips a change.
    @Test func anExistingSQLiteDatabaseIsRenumberedPerAccount() async throws {
        let path = Scratch.path("tipsync-migrate").appendingPathComponent("server.sqlite").path
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // The v2 schema, as a server of the previous release left it: positions interleaved.
        let old = try DatabaseQueue(path: path)
        let bodies = try await old.write { db in
            var bodies: [String: [String]] = [:]
            try db.execute(
                sql: """
                    CREATE TABLE account (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,
                        compactedThrough INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE device (account INTEGER NOT NULL REFERENCES account(id), name TEXT NOT NULL,
                        highestSeq INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (account, name));
                    CREATE TABLE token (hash TEXT PRIMARY KEY NOT NULL, account INTEGER NOT NULL, device TEXT NOT NULL,
                        FOREIGN KEY (account, device) REFERENCES device(account, name));
                    CREATE TABLE change (position INTEGER PRIMARY KEY AUTOINCREMENT, account INTEGER NOT NULL,
                        device TEXT NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL, kind TEXT NOT NULL,
                        body TEXT NOT NULL, UNIQUE (account, device, seq));
                    CREATE INDEX change_by_account ON change (account, position);
                    CREATE TABLE server_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    INSERT INTO server_meta (key, value) VALUES ('cursorGeneration', 'oldgeneration');
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1'), ('v2-cursor-generation');
                    INSERT INTO account (name) VALUES ('a'), ('b');
                    INSERT INTO device (account, name, highestSeq) VALUES (1, 'x', 3), (2, 'y', 2);
                    """)
            for (account, device, seq) in [(1, "x", 1), (2, "y", 1), (1, "x", 2), (2, "y", 2), (1, "x", 3)] {
                let body = parameterChanges(device: device, seqs: Int64(seq)...Int64(seq))[0].canonicalJSON
                bodies[device, default: []].append(body)
                try db.execute(
                    sql:
                        "INSERT INTO change (account, device, seq, hlc, kind, body) VALUES (?, ?, ?, 0, 'parameter', ?)",
                    arguments: [account, device, seq, body])
            }
            return bodies
        }
        try old.close()
        let store = try SQLiteSyncStore(path: path)
        try await store.migrate()
        // The log ends as one B-tree keyed by (account, position): no rowid, no other index.
        let migrated = try DatabaseQueue(path: path)
        let (table, indexes) = try await migrated.read { db in
            (
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'change'") ?? "",
                try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list('change')")
            )
        }
        try migrated.close()
        #expect(table.hasSuffix("WITHOUT ROWID"))
        #expect(indexes == ["sqlite_autoindex_change_1"])
        let generation = try await store.cursorGeneration()
        #expect(generation != "oldgeneration")
        for (account, device) in [(Int64(1), "x"), (2, "y")] {
            let page = try await store.pull(account: account, after: 0, limit: 100)
            #expect(page.bodies == bodies[device])
            #expect(page.cursor == Int64(bodies[device]!.count))
        }
        let fixtureStore = store
        let app = buildApplication(configuration: .test, dependencies: ServerDependencies(store: fixtureStore))
        let token = try await CredentialIssuance(fixtureStore).createToken(accountName: "a", device: "x")
        try await app.test(.router) { client in
            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(token)"
            try await client.execute(uri: "/v1/pull?cursor=oldgeneration.3", method: .get, headers: headers) {
                response throws in
                #expect(response.status == .badRequest)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "invalid_cursor")
            }
        }
    }
}
