import Foundation
import Testing
import TipSyncCore

/// `PullResponse.continuation(of:)` reads a page's `cursor` and `more` without decoding its changes,
/// so the client requests the next page while it decodes this one. It must find them in any member
/// order, never take them from inside a change, and agree with the page's full decode.
@Suite struct PullContinuationTests {
    static let changes =
        #"[{"date":1,"device":"p","event":"e","hlc":"018bcfe56800-0000","id":"p:1","info":{"cursor":"no","more":false,"note":"a \"quoted\" ], } \\"},"kind":"donation","seq":1}]"#

    static func page(_ order: [String]) -> String {
        let members = [
            "catalog": #""catalog":"v1""#, "changes": #""changes":\#(changes)"#, "cursor": #""cursor":"g.42""#,
            "generation": #""generation":"g""#, "highestSeq": #""highestSeq":0"#, "more": #""more":true"#,
            "serverTime": #""serverTime":1700000000000"#, "snapshot": #""snapshot":false"#,
        ]
        return "{" + order.map { members[$0]! }.joined(separator: ",") + "}"
    }

    static let orders: [[String]] = [
        // The order this server sends (cursor and more first), and the sorted order of servers before.
        ["cursor", "more", "catalog", "changes", "generation", "highestSeq", "serverTime", "snapshot"],
        ["catalog", "changes", "cursor", "generation", "highestSeq", "more", "serverTime", "snapshot"],
        ["snapshot", "more", "changes", "serverTime", "cursor", "highestSeq", "catalog", "generation"],
    ]

    @Test(arguments: orders) func foundInAnyMemberOrderAndAsTheDecodeSaysNotFromInsideAChange(order: [String]) throws {
        let text = Self.page(order)
        let found = try #require(PullResponse.continuation(of: Data(text.utf8)))
        #expect(found.cursor == "g.42")
        #expect(found.more == true)
        let decoded = try JSONCoding.decode(PullResponse.self, from: Data(text.utf8))
        #expect(decoded.cursor == found.cursor && decoded.more == found.more)
    }

    @Test func bytesThatAreNotContiguousGiveTheSameAnswer() {
        let text = Self.page(Self.orders[1])
        let contiguous = PullResponse.continuation(of: Array(text.utf8))
        // A collection without contiguous storage is read through a copy.
        let scattered = PullResponse.continuation(of: text.utf8.lazy.map { $0 })
        #expect(contiguous?.cursor == "g.42" && scattered?.cursor == "g.42")
        #expect(contiguous?.more == scattered?.more)
    }

    @Test(arguments: [
        #"{"changes":[],"cursor":"g.1"}"#,  // no more
        #"{"changes":[],"more":false}"#,  // no cursor
        #"{"cursor":1,"more":false}"#,  // cursor not a string
        #"{"cursor":"g.1","more":"yes"}"#,  // more not a boolean
        #"{"changes":[{"a":"unterminated}],"cursor":"g.1","more":false}"#,
        #"["cursor","g.1"]"#, "", "null",
    ])
    func nilWhenThereIsNoReadableCursorAndMore(text: String) {
        #expect(PullResponse.continuation(of: Data(text.utf8)) == nil)
    }
}
