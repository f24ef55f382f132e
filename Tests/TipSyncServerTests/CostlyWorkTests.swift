import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync

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
