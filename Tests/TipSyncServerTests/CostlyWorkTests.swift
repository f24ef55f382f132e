import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 59, item 1: a push body whose size a device chooses is decoded, parsed and checked in a lane
/// of its own at the lowest priority, so it cannot hold the threads that serve every other device.
@Suite struct CostlyWorkTests {
    static func donations(_ range: ClosedRange<Int64>) -> [Change] {
        range.map { seq in
            change(
                "phone", seq,
                .donation(event: "opened", id: "phone:\(seq)", date: 1_700_000_000_000 + seq, info: nil))
        }
    }

    @Test func largeAndCompressedBodiesGoToTheLaneAndEverydayPushesDoNot() async throws {
        let fixture = try await ServerFixture.make()
        let lane = CostlyWork()
        var dependencies = ServerDependencies(store: fixture.store)
        dependencies.costlyWork = lane
        let app = buildApplication(configuration: .test, dependencies: dependencies)
        try await app.test(.router) { client in
            @Sendable func push(_ body: ByteBuffer, gzip: Bool = false) async throws -> PushResponse {
                var headers = fixture.headers("phone")
                if gzip { headers[.contentEncoding] = "gzip" }
                return try await client.execute(uri: "/v1/push", method: .post, headers: headers, body: body) {
                    #expect($0.status == .ok, "\(String(buffer: $0.body))")
                    return try decode(PushResponse.self, $0.body)
                }
            }
            // An everyday push is served where it arrives.
            let small = try body(PushRequest(changes: Self.donations(1...1)))
            #expect(small.readableBytes <= CostlyWork.threshold)
            #expect(try await push(small).accepted == 1)
            #expect(lane.runCount == 0)
            // A body above the threshold: the lane, with the same rules (stored, then a duplicate).
            let large = try body(PushRequest(changes: Self.donations(2...1001)))
            #expect(large.readableBytes > CostlyWork.threshold)
            #expect(try await push(large).accepted == 1000)
            #expect(lane.runCount == 1)
            #expect(try await push(large).duplicates == 1000)
            #expect(lane.runCount == 2)
            // A compressed body is judged by what it inflates to, not by its size on the wire.
            var plain = try body(PushRequest(changes: Self.donations(1002...1002)))
            #expect(try await push(try plain.compress(with: .gzip()), gzip: true).accepted == 1)
            #expect(lane.runCount == 2)
            var inflating = try body(PushRequest(changes: Self.donations(1003...2002)))
            let gzipped = try inflating.compress(with: .gzip())
            #expect(gzipped.readableBytes < CostlyWork.threshold)
            #expect(try await push(gzipped, gzip: true).accepted == 1000)
            #expect(lane.runCount == 3)
            // A body the lane refuses is answered as anywhere else: nothing stored, the field named.
            var broken = try body(PushRequest(changes: Self.donations(2003...3002)))
            broken = ByteBuffer(string: String(buffer: broken).replacingOccurrences(of: "\"phone:3002\"", with: "7"))
            try await client.execute(uri: "/v1/push", method: .post, headers: fixture.headers("phone"), body: broken) {
                response in
                #expect(response.status == .badRequest || response.status == .unprocessableContent)
                #expect(String(buffer: response.body).contains("changes[999]"), "\(String(buffer: response.body))")
            }
            #expect(lane.runCount == 4)
        }
        #expect(try await fixture.store.logCount(account: fixture.accountID) == 2002)
    }

    /// A change's canonical text is at most ``Change/maximumTextBytes`` (protocol.md §3): the outside
    /// attack's 4 KB gzip body inflated to one 4 MB change, which the one writer then stored while every
    /// other device's push waited. A larger change is refused whole, naming it, and nothing is stored;
    /// one of exactly the limit is stored.
    @Test func aChangeLargerThanTheLimitIsRefusedWholeAndNothingIsStored() async throws {
        let fixture = try await ServerFixture.make()
        @Sendable func parameter(_ seq: Int64, textBytes: Int) -> Change {
            let empty = change("phone", seq, .parameter(id: "big", value: .string("")))
            let padding = textBytes - empty.canonicalJSON.utf8.count
            let made = change(
                "phone", seq, .parameter(id: "big", value: .string(String(repeating: "x", count: padding))))
            #expect(made.canonicalJSON.utf8.count == textBytes)
            return made
        }
        try await fixture.app().test(.router) { client in
            let small = change("phone", 1, .parameter(id: "small", value: .int(1)))
            for gzip in [false, true] {
                var pushed = try body(
                    PushRequest(changes: [small, parameter(2, textBytes: Change.maximumTextBytes + 1)]))
                var headers = fixture.headers("phone")
                if gzip {
                    pushed = try pushed.compress(with: .gzip())
                    headers[.contentEncoding] = "gzip"
                }
                try await client.execute(uri: "/v1/push", method: .post, headers: headers, body: pushed) { response in
                    #expect(response.status == .unprocessableContent)
                    let error = try decode(ErrorBody.self, response.body).error
                    #expect(error.code == "invalid_change")
                    #expect(
                        error.message.hasPrefix("changes[1]: its canonical JSON text is 65537 bytes"),
                        "\(error.message)")
                }
            }
            #expect(try await fixture.store.logCount(account: fixture.accountID) == 0)
            let exact = try body(PushRequest(changes: [small, parameter(2, textBytes: Change.maximumTextBytes)]))
            try await client.execute(uri: "/v1/push", method: .post, headers: fixture.headers("phone"), body: exact) {
                #expect($0.status == .ok, "\(String(buffer: $0.body))")
            }
        }
        #expect(try await fixture.store.logCount(account: fixture.accountID) == 2)
        // A writer never stores one (protocol.md §17.2): the call fails and nothing is written.
        let phone = try makeDevice("phone")
        let large = JSONValue.string(String(repeating: "x", count: Change.maximumTextBytes))
        #expect(throws: Change.Violation.self) { try phone.setParameter("big", to: large) }
        #expect(throws: Change.Violation.self) { try phone.donate(event: "opened", info: .object(["note": large])) }
        #expect(try phone.lastLocalSeq == 0)
        #expect(try phone.outbox(limit: 10).isEmpty)
    }

    #if os(Linux)
        @Test func theLanesThreadRunsAtTheLowestPriority() async throws {
            let lane = CostlyWork()
            let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            let nice = try await lane.run { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
            #expect(nice == 19)
            // Only the lane's thread: the caller's (a thread every other request shares) is left as it was.
            #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before)
            #expect(before < 19)
        }
    #endif
}
