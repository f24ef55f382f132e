import Testing
import TipSync
import TipSyncCore

/// Issue 75, item 4: a client found which change a push refused by parsing `changes[i]` out of the
/// `invalid_change` message. Since revision 2.9 the answer carries `change` and `field`; the message
/// is read only from an older server. (The server's side: conformance/server/push-refusal-names-the-change.json.)
@Suite struct RefusedChangeIndexTests {
    @Test func theStructureDecidesAndTheMessageOnlyWithoutIt() {
        func detail(_ message: String, change: Int? = nil, field: String? = nil) -> ErrorBody.Detail {
            ErrorBody.Detail(code: "invalid_change", message: message, change: change, field: field)
        }
        #expect(RefusedChange.index(in: detail("changes[5].hlc: wrong text", change: 2, field: "hlc")) == 2)
        #expect(RefusedChange.index(in: detail("changes[1].seq: numbering", field: "seq")) == nil)
        #expect(RefusedChange.index(in: detail("changes[0]: over 65,536 bytes", change: 0)) == 0)
        // A server before 2.9.
        #expect(RefusedChange.index(in: detail("changes[3].value: not in the model")) == 3)
        #expect(RefusedChange.index(in: detail("changes[3].seq: numbering")) == nil)
        #expect(RefusedChange.index(in: detail("body: not a push")) == nil)
    }
}
