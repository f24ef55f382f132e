import Testing

@testable import TipSyncCore

/// ``Donation/field(_:)``: a payload member by name, for rules — read from the payload itself when
/// it has one member, from the sorted member list when it has more.
@Suite struct DonationFieldTests {
    static func donation(_ info: JSONValue?) -> Donation {
        Donation(id: "a:1", date: 1, info: info, stamp: Stamp(hlc: HLC(milliseconds: 1, counter: 0), device: "a"))
    }

    @Test func oneMember() {
        let donation = Self.donation(.object(["yardID": .int(7)]))
        #expect(donation.field("yardID") == .int(7))
        #expect(donation.field("yard") == nil)
        #expect(donation.field("") == nil)
        // Names compare as Swift strings do everywhere in rules: canonically equivalent spellings match.
        #expect(Self.donation(.object(["e\u{301}": .bool(true)])).field("\u{e9}") == .bool(true))
    }

    @Test func severalMembers() {
        let donation = Self.donation(.object(["b": .int(2), "a": .int(1), "c": .null]))
        #expect(donation.field("a") == .int(1))
        #expect(donation.field("b") == .int(2))
        #expect(donation.field("c") == .null)
        #expect(donation.field("d") == nil)
    }

    @Test func noMembers() {
        #expect(Self.donation(nil).field("a") == nil)
        #expect(Self.donation(.object([:])).field("a") == nil)
        #expect(Self.donation(.int(1)).field("a") == nil)
        #expect(Self.donation(.array([.object(["a": .int(1)])])).field("a") == nil)
        #expect(Self.donation(.null).field("a") == nil)
    }
}
