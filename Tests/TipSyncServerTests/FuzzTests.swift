import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport
import TipSyncTestSupport

/// Generated and mutated requests against an in-process server: every endpoint, every change kind
/// and field with wrong types, extreme integers, huge and nested JSON, invalid UTF-8, bad HLCs and
/// cursors. Whatever arrives: no crash, no 5xx, every error has the protocol's JSON shape, and a
/// rejected request stores nothing.
///
/// Fixed seed and budget; `TIPSYNC_FUZZ_SEED` and `TIPSYNC_FUZZ_REQUESTS` change them for a longer
/// hunt (`TIPSYNC_FUZZ_REQUESTS=200000 swift test --filter FuzzTests`).
// Ten minutes: since a right credential is never refused for others' failures (issue 59), the
// generated requests with valid tokens all reach the routes (before, the run's early bad tokens
// throttled them to cheap 429s), so the run does more work than it did.
@Suite(.timeLimit(.minutes(10))) struct FuzzTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seed = environment["TIPSYNC_FUZZ_SEED"].flatMap(UInt64.init) ?? 20_261_122
    static let budget = environment["TIPSYNC_FUZZ_REQUESTS"].flatMap(Int.init) ?? 4000

    @Test func noRequestCrashesAnswers5xxOrStoresAfterARejection() async throws {
        let fixture = try await ServerFixture.make()
        let failures = try await fixture.app().test(.router) { client in
            var generator = RequestGenerator(random: SeededGenerator(seed: Self.seed), tokens: fixture.tokens)
            var failures: [String] = []
            for index in 0..<Self.budget where failures.count <= 20 {
                let request = generator.next()
                let before = try await fixture.store.logCount(account: fixture.accountID)
                failures += try await client.execute(
                    uri: request.uri, method: request.method, headers: request.headers,
                    body: request.body.map { ByteBuffer(bytes: $0) }
                ) { response -> [String] in
                    let after = try await fixture.store.logCount(account: fixture.accountID)
                    let label = "#\(index) \(request.method) \(request.uri.prefix(120)) → \(response.status.code)"
                    var found: [String] = []
                    if response.status.code >= 500 { found.append("\(label): 5xx") }
                    guard !(200..<300).contains(response.status.code) else { return found }
                    if after != before { found.append("\(label): stored \(after - before) changes") }
                    if request.method != .head {
                        let body = try? JSONCoding.decode(ErrorBody.self, from: Data(response.body.readableBytesView))
                        if body == nil || body?.error.code.isEmpty == true || body?.error.message.isEmpty == true {
                            found.append("\(label): not the JSON error shape")
                        }
                    }
                    return found
                }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        // The server is still whole: a valid push and pull after everything above.
        try await fixture.app().test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
        }
    }
}

/// Builds one request at a time from a seeded generator.
struct RequestGenerator {
    struct Generated {
        var method: HTTPRequest.Method
        var uri: String
        var headers: HTTPFields
        var body: [UInt8]?
    }

    var random: SeededGenerator
    let tokens: [String: String]
    var nextSeq: [String: Int64] = [:]

    init(random: SeededGenerator, tokens: [String: String]) {
        self.random = random
        self.tokens = tokens
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
    mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

    mutating func next() -> Generated {
        switch random.next() % 10 {
        case 0...5: return push()
        case 6, 7: return pull()
        case 8: return device()
        default: return anything()
        }
    }

    // MARK: Requests

    mutating func headers(device: String = "phone", json: Bool = true) -> HTTPFields {
        var headers = HTTPFields()
        switch random.next() % 20 {
        case 0: break  // no Authorization
        case 1: headers[.authorization] = "Bearer"
        case 2: headers[.authorization] = "Basic " + (tokens[device] ?? "")
        case 3: headers[.authorization] = "Bearer ts_" + String(repeating: "A", count: Int(random.next() % 5000))
        default: headers[.authorization] = "Bearer " + (tokens[device] ?? "")
        }
        if json {
            headers[.contentType] = pick([
                "application/json", "application/json", "application/json", "application/json; charset=utf-8",
                "text/plain", "application/jsonx", "",
            ])
        }
        return headers
    }

    mutating func push() -> Generated {
        let device = pick(["phone", "phone", "phone", "laptop", "café", ""])
        var changes: [String] = []
        let count = pick([1, 1, 2, 3, 10, 0])
        let start = nextSeq[device, default: 1]
        for offset in 0..<count { changes.append(change(device: device, seq: start + Int64(offset))) }
        if count > 0, chance(20) { nextSeq[device] = start + Int64(count) }
        var body = Array(#"{"changes":[\#(changes.joined(separator: ","))]}"#.utf8)
        if chance(25) { body = mutateBytes(body) }
        if chance(5) {
            body = Array(
                pick([
                    "", "[]", "null", "42", #"{"changes":{}}"#, #"{"changes":null}"#, #"{"changes":[null]}"#,
                    #"{"changes":[1,2]}"#, #"{"changes":["x"]}"#, String(repeating: "[", count: 100_000),
                    #"{"changes":[]}"#, "{\"changes\":[" + String(repeating: "{}", count: 2000) + "]}",
                ]).utf8)
        }
        return Generated(
            method: chance(97) ? .post : pick([.put, .get, .head, .delete]), uri: "/v1/push",
            headers: headers(device: device == "laptop" ? "laptop" : "phone"), body: body)
    }

    mutating func pull() -> Generated {
        var query: [String] = []
        if chance(60) {
            query.append(
                "cursor="
                    + pick([
                        "0", "1", "-1", "9223372036854775807", "9223372036854775808", "abc", "x.1", ".1", "1.", "..",
                        "%00", "%FF%FE", "ffffffffffffffff.3", "%E2%82%AC", String(repeating: "9", count: 400),
                    ]))
        }
        if chance(40) {
            query.append(
                "limit=" + pick(["0", "1", "5000", "5001", "-1", "9223372036854775807", "1e3", "x", "", "%20"]))
        }
        if chance(30) {
            // Only waits the server refuses, or 0: a valid wait would hold the fuzzer for a minute.
            query.append("wait=" + pick(["0", "-1", "61", "9223372036854775807", "1.5", "x", ""]))
        }
        if chance(10) { query.append(pick(["access_token=secret", "%ZZ", "a=%", "&&&", "cursor"])) }
        return Generated(
            method: chance(90) ? .get : pick([.head, .post, .delete]),
            uri: "/v1/pull" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")), headers: headers(json: false),
            body: nil)
    }

    mutating func device() -> Generated {
        let name = pick([
            "phone", "laptop", "nobody", "caf%C3%A9", "cafe%CC%81", "%00", "%FF", "..", "a%2Fb",
            String(repeating: "x", count: 3000), "%E2%80%AE", "%F0%9F%98%80",
        ])
        return Generated(method: .get, uri: "/v1/devices/" + name, headers: headers(json: false), body: nil)
    }

    mutating func anything() -> Generated {
        let path = pick([
            "/", "/health", "/metrics", "/v1", "/v1/", "/v1/live/x", "/v2/push", "//v1//push", "/v1/devices",
            "/v1/devices/", "/admin", "/%2e%2e/etc/passwd", "/v1/push/../pull",
        ])
        return Generated(
            method: pick([.get, .post, .put, .delete, .patch, .options, .head, .trace]), uri: path,
            headers: headers(json: chance(50)), body: chance(30) ? Array("{\"x\":1}".utf8) : nil)
    }

    // MARK: Changes

    mutating func change(device: String, seq: Int64) -> String {
        let hlc = "0" + String(UInt64(Date().timeIntervalSince1970 * 1000), radix: 16) + "-0000"
        var fields: [(String, String)] = [
            ("device", quoted(device)), ("seq", String(seq)), ("hlc", quoted(hlc)),
        ]
        switch random.next() % 6 {
        case 0: fields += [("kind", #""parameter""#), ("id", #""p""#), ("value", value())]
        case 1:
            fields += [
                ("kind", #""eligibility""#), ("tip", #""t""#), ("state", #""invalidated""#),
                ("reason", #""tipClosed""#),
            ]
        case 2:
            fields += [
                ("kind", #""display""#), ("tip", #""t""#), ("count", "1"), ("duration", "1.5"),
                ("lastDisplayed", "1700000000000"),
            ]
        case 3:
            fields += [
                ("kind", #""donation""#), ("event", #""e""#), ("id", quoted("\(device):\(seq)")),
                ("date", "1700000000000"), ("info", value()),
            ]
        case 4: fields += [("kind", #""donationsDeleted""#), ("event", #""e""#)]
        default: fields += [("kind", #""datastoreReset""#)]
        }
        if chance(40) {
            // One field gets a wrong or extreme value, or goes missing, or an unknown one appears.
            let index = Int(random.next() % UInt64(fields.count))
            switch random.next() % 4 {
            case 0: fields.remove(at: index)
            case 1: fields.append(("x-\(random.next() % 3)", value()))
            default: fields[index].1 = hostile()
            }
        }
        return "{" + fields.map { "\(quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    mutating func value() -> String {
        pick([
            "true", "1", "-1", "1.5", #""pro""#, "null", "[1,2]", #"{"a":{"b":[null]}}"#, "12345678901234567890123",
            "1.0", "-0", "1e308", "9007199254740993", #""café""#, #""\ud800""#,
        ])
    }

    /// Values no well-behaved client sends.
    mutating func hostile() -> String {
        pick([
            "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
            "9007199254740992", "9007199254740993", "1e400", "-1e400", "0", "-1", "1.5", "NaN", "null", "true",
            "[]", "{}", #""""#, #""ffffffffffff-ffff""#, #""000000000000-0000""#, #""FFFFFFFFFFFF-FFFF""#,
            #""018bcfe56800-000""#, #""018bcfe56800+0000""#, #""\u0000""#, #""\ud83d""#, #""bored""#,
            quoted(String(repeating: "x", count: 100_000)),
            String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
            #"{"hlc":"018bcfe56800-0000","device":"phone"}"#, #"{"hlc":"x"}"#,
        ])
    }

    /// Byte-level damage: truncation, a flipped byte, invalid UTF-8.
    mutating func mutateBytes(_ bytes: [UInt8]) -> [UInt8] {
        guard !bytes.isEmpty else { return bytes }
        var bytes = bytes
        let index = Int(random.next() % UInt64(bytes.count))
        switch random.next() % 4 {
        case 0: return Array(bytes[..<index])
        case 1: bytes[index] ^= UInt8(truncatingIfNeeded: random.next() | 1)
        case 2:
            bytes.insert(
                contentsOf: pick([[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80]]), at: index)
        default: bytes.insert(contentsOf: Array(pick([",", "]", "}", "\"", "\\", "\u{0}"]).utf8), at: index)
        }
        return bytes
    }

    func quoted(_ text: String) -> String {
        String(decoding: (try? JSONCoding.encoder.encode(text)) ?? Data(), as: UTF8.self)
    }
}
