import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

@Suite struct ProtocolTests {
    @Test func healthAndMetricsNeedNoToken() async throws {
        let fixture = try await ServerFixture.make()
        try await fixture.app().test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/metrics", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test func wrongOrMissingTokenIs401WithAJSONError() async throws {
        let fixture = try await ServerFixture.make()
        try await fixture.app().test(.router) { client in
            var headers = HTTPFields()
            headers[.authorization] = "Bearer ts_not-a-token"
            try await client.execute(uri: "/v1/pull", method: .get, headers: headers) { response in
                #expect(response.status == .unauthorized)
                let decoded = try decode(ErrorBody.self, response.body)
                #expect(decoded.error.code == "unauthorized")
            }
            try await client.execute(uri: "/v1/pull", method: .get) { #expect($0.status == .unauthorized) }
        }
    }

    @Test func pushThenPullAndARetriedPushIsANoOp() async throws {
        let fixture = try await ServerFixture.make()
        let changes = [
            change("phone", 1, .parameter(id: "p", value: .int(1))),
            change("phone", 2, .eligibility(tip: "t", state: .invalidated(.tipClosed))),
        ]
        try await fixture.app().test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: changes))
            ) { response in
                #expect(response.status == .ok)
                let result = try decode(PushResponse.self, response.body)
                #expect(result.accepted == 2 && result.duplicates == 0 && result.highestSeq == 2)
            }
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: changes))
            ) { response in
                let result = try decode(PushResponse.self, response.body)
                #expect(result.accepted == 0 && result.duplicates == 2 && result.highestSeq == 2)
            }
            let count = try await fixture.store.logCount(account: fixture.accountID)
            #expect(count == 2)
            try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")) { response in
                let page = try decode(PullResponse.self, response.body)
                #expect(page.changes == changes)
                #expect(!page.more && !page.snapshot)
            }
        }
    }

    @Test func pullPagesWithServerMintedCursors() async throws {
        let fixture = try await ServerFixture.make()
        let changes = (1...5).map {
            change("phone", Int64($0), .donation(event: "e", id: "phone:\($0)", date: 1, info: nil))
        }
        _ = try await fixture.store.push(changes, from: DeviceIdentity(accountID: fixture.accountID, device: "phone"))
        try await fixture.app().test(.router) { client in
            var cursor: String?
            var seen: [Change] = []
            var pages = 0
            repeat {
                let uri = "/v1/pull?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await client.execute(uri: uri, method: .get, headers: fixture.headers("laptop")) {
                    try decode(PullResponse.self, $0.body)
                }
                seen += page.changes
                cursor = page.cursor
                pages += 1
                if !page.more { break }
            } while pages < 10
            #expect(seen == changes)
            #expect(pages == 3)
        }
    }

    /// protocol.md section 8: a page sends `cursor` and `more` before `changes`, so a client can read
    /// them and request the next page without scanning this one's changes.
    @Test func aPageSendsItsCursorAndMoreBeforeItsChanges() async throws {
        let fixture = try await ServerFixture.make()
        let changes = (1...3).map {
            change("phone", Int64($0), .donation(event: "e", id: "phone:\($0)", date: 1, info: nil))
        }
        _ = try await fixture.store.push(changes, from: DeviceIdentity(accountID: fixture.accountID, device: "phone"))
        try await fixture.app().test(.router) { client in
            for uri in ["/v1/pull?limit=2", "/v1/pull"] {
                try await client.execute(uri: uri, method: .get, headers: fixture.headers("laptop")) { response in
                    let text = String(buffer: response.body)
                    let page = try decode(PullResponse.self, response.body)
                    let cursor = try #require(text.range(of: #""cursor":"#))
                    let more = try #require(text.range(of: #""more":"#))
                    let list = try #require(text.range(of: #""changes":["#))
                    #expect(text.hasPrefix(#"{"cursor":""#))
                    #expect(cursor.lowerBound < list.lowerBound && more.lowerBound < list.lowerBound)
                    let found = try #require(PullResponse.continuation(of: Data(text.utf8)))
                    #expect(found.cursor == page.cursor && found.more == page.more)
                    #expect(page.changes.count == (uri.contains("limit=2") ? 2 : 3))
                }
            }
        }
    }

    @Test func badInputIsRejectedWholeAndStoresNothing() async throws {
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = 4096
        configuration.maxBatch = 3
        let fixture = try await ServerFixture.make()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let valid = #"{"device":"phone","seq":1,"hlc":"018bcfe56800-0000","kind":"datastoreReset"}"#
        let cases: [(String, HTTPResponse.Status, String)] = [
            ("{not json", .badRequest, "malformed_json"),
            (
                #"{"changes":[{"device":"phone","seq":"one","hlc":"018bcfe56800-0000","kind":"datastoreReset"}]}"#,
                .unprocessableContent, "invalid_change"
            ),
            (
                #"{"changes":[{"device":"phone","seq":1,"hlc":"018bcfe56800-0000","kind":"teleport"}]}"#,
                .unprocessableContent, "invalid_change"
            ),
            (
                #"{"changes":[\#(valid),{"device":"phone","seq":2,"hlc":"nope","kind":"datastoreReset"}]}"#,
                .unprocessableContent, "invalid_change"
            ),
            (
                #"{"changes":[{"device":"laptop","seq":1,"hlc":"018bcfe56800-0000","kind":"datastoreReset"}]}"#,
                .forbidden, "device_mismatch"
            ),
            (
                #"{"changes":[{"device":"phone","seq":5,"hlc":"018bcfe56800-0000","kind":"datastoreReset"}]}"#,
                .conflict, "sequence_gap"
            ),
            (
                #"{"changes":[{"device":"phone","seq":1,"hlc":"\#(HLC(milliseconds: UInt64(now + 3_600_000), counter: 0))","kind":"datastoreReset"}]}"#,
                .unprocessableContent, "clock_skew"
            ),
            (
                #"{"changes":[\#(Array(repeating: valid, count: 4).joined(separator: ","))]}"#, .contentTooLarge,
                "batch_too_large"
            ),
            (#"{"changes":[],"pad":"\#(String(repeating: "x", count: 5000))"}"#, .contentTooLarge, "body_too_large"),
        ]
        try await fixture.app(configuration: configuration).test(.router) { client in
            for (text, status, code) in cases {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: fixture.headers("phone"), body: ByteBuffer(string: text)
                ) { response in
                    #expect(response.status == status, "\(code)")
                    let error = try decode(ErrorBody.self, response.body).error
                    #expect(error.code == code)
                    #expect(!error.message.isEmpty && error.serverTime != nil)
                }
            }
            // A well-formed change whose event id holds a byte that is not UTF-8: refused, not repaired.
            let notUTF8 =
                Array(
                    #"{"changes":[{"device":"phone","seq":1,"hlc":"018bcfe56800-0000","kind":"donation","event":"e"#
                        .utf8)
                + [0xFF] + Array(#"","id":"phone:1","date":1}]}"#.utf8)
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"), body: ByteBuffer(bytes: notUTF8)
            ) { response in
                #expect(response.status == .badRequest)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "malformed_json" && error.message.contains("UTF-8"))
            }
            try await client.execute(uri: "/v1/pull?cursor=abc", method: .get, headers: fixture.headers("phone")) {
                #expect($0.status == .badRequest)
                let decoded = try decode(ErrorBody.self, $0.body)
                #expect(decoded.error.code == "invalid_cursor")
            }
            try await client.execute(uri: "/v1/nothing-here", method: .get, headers: fixture.headers("phone")) {
                #expect($0.status == .notFound)
                let decoded = try decode(ErrorBody.self, $0.body)
                #expect(decoded.error.code == "not_found")
            }
        }
        #expect(try await fixture.store.logCount(account: fixture.accountID) == 0)
        #expect(try await fixture.store.highestSeq(account: fixture.accountID, device: "phone") == 0)
    }

    @Test func sequenceGapTellsTheDeviceWhereToResume() async throws {
        let fixture = try await ServerFixture.make()
        _ = try await fixture.store.push(
            [change("phone", 1, .datastoreReset)], from: DeviceIdentity(accountID: fixture.accountID, device: "phone"))
        try await fixture.app().test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: [change("phone", 3, .datastoreReset)]))
            ) { response in
                #expect(response.status == .conflict)
                let decoded = try decode(ErrorBody.self, response.body)
                #expect(decoded.error.expectedSeq == 2)
            }
        }
    }

    @Test func anotherAccountsDataIsInvisible() async throws {
        let fixture = try await ServerFixture.make()
        let bobToken = try await CredentialIssuance(fixture.store).createToken(
            accountName: try await {
                _ = try await fixture.store.createAccount(name: "bob")
                return "bob"
            }(), device: "bob-phone")
        _ = try await fixture.store.push(
            [change("phone", 1, .parameter(id: "secret", value: .string("alice")))],
            from: DeviceIdentity(accountID: fixture.accountID, device: "phone"))
        try await fixture.app().test(.router) { client in
            var bob = HTTPFields()
            bob[.authorization] = "Bearer \(bobToken)"
            try await client.execute(uri: "/v1/pull", method: .get, headers: bob) { response in
                let page = try decode(PullResponse.self, response.body)
                #expect(page.changes.isEmpty)
            }
            try await client.execute(uri: "/v1/devices/phone", method: .get, headers: bob) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/v1/devices/phone", method: .get, headers: fixture.headers("laptop")) {
                response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/v1/devices/bob-phone", method: .get, headers: fixture.headers("laptop")) {
                response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func aPullAcrossCompactionGetsASnapshotAndLosesNothing() async throws {
        let fixture = try await ServerFixture.make()
        let phone = DeviceIdentity(accountID: fixture.accountID, device: "phone")
        let base = UInt64(Date().timeIntervalSince1970 * 1000)
        var changes: [Change] = []
        for seq in 1...20 {
            changes.append(
                change(
                    "phone", Int64(seq), .parameter(id: "p\(seq % 3)", value: .int(Int64(seq))), ms: base + UInt64(seq))
            )
        }
        changes.append(change("phone", 21, .donation(event: "e", id: "phone:21", date: 5, info: nil), ms: base + 21))
        _ = try await fixture.store.push(changes, from: phone)
        let expected = changes.reduce(into: ReplicaState()) { $0.apply($1) }

        try await fixture.app().test(.router) { client in
            // A device reads the first page, then the server compacts.
            let first = try await client.execute(
                uri: "/v1/pull?limit=5", method: .get, headers: fixture.headers("laptop")
            ) {
                try decode(PullResponse.self, $0.body)
            }
            let dropped = try await LogCompactor(store: fixture.store).compact(account: fixture.accountID)
            #expect(dropped == 17)
            let remaining = try await fixture.store.logCount(account: fixture.accountID)
            #expect(remaining == 4)
            var state = ReplicaState()
            for change in first.changes { state.apply(change) }
            var cursor = first.cursor
            var sawSnapshot = false
            while true {
                let page = try await client.execute(
                    uri: "/v1/pull?limit=5&cursor=\(cursor)", method: .get, headers: fixture.headers("laptop")
                ) { try decode(PullResponse.self, $0.body) }
                sawSnapshot = sawSnapshot || page.snapshot
                for change in page.changes { state.apply(change) }
                cursor = page.cursor
                if !page.more { break }
            }
            #expect(sawSnapshot)
            #expect(state == expected)
        }
    }
}

@Suite struct ServerClockTests {
    @Test func clockSkewErrorsReportTheServersOwnClock() async throws {
        let fixture = try await ServerFixture.make()
        let serverNow: Int64 = 1_800_000_000_000
        let ahead = change("phone", 1, .datastoreReset, ms: UInt64(serverNow + 3_600_000))
        try await fixture.app(now: { serverNow }).test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: [ahead]))
            ) { response in
                #expect(response.status == .unprocessableContent)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "clock_skew")
                #expect(error.serverTime == serverNow)
                #expect(error.message.contains("3600 s ahead"))
            }
        }
    }
}
