import Foundation
import Testing
import TipSyncCore

@testable import TipSync

/// What a push reads of the outbox: no more than one push can carry. A device back from a long time
/// offline with 10 MB of large values read (and decoded) its whole outbox, up to the batch size, for
/// every push of 1 MiB — ten pushes read it ten times.
@Suite struct OutboxTests {
    @Test func theOutboxIsReadNoFurtherThanAPushCarries() throws {
        let replica = try makeReplica("phone", directory: temporaryDirectory("outbox"))
        try replica.load(catalog: try Catalog(validating: Array(#"{"parameters":[{"id":"note","default":""}]}"#.utf8)))
        let value = String(repeating: "é", count: 30_000)  // 60,000 bytes of UTF-8
        for index in 0..<40 { try replica.setParameter("note", to: .string("\(index):\(value)")) }
        let whole = try replica.outbox(limit: 500)
        #expect(whole.count == 40)
        // What the client asks for a push: as many as fit the protocol's largest body, and they all do.
        let push = try replica.outbox(limit: 500, bytes: PushRequest.maxClientChangesBytes)
        #expect(push.count > 1 && push.count < 40)
        #expect(push == Array(whole.prefix(push.count)))
        #expect(PushRequest.body(fitting: push).count == push.count)
        #expect(PushRequest.body(fitting: whole).count == push.count)
        // At least one, however large: a push must make progress.
        #expect(try replica.outbox(limit: 500, bytes: 1) == [whole[0]])
        // The count still bounds it, and an empty outbox is empty.
        #expect(try replica.outbox(limit: 2, bytes: .max) == Array(whole.prefix(2)))
        try replica.updateSyncProgress { $0.setPushed(through: 40) }
        #expect(try replica.outbox(limit: 500, bytes: PushRequest.maxClientChangesBytes).isEmpty)
    }
}
