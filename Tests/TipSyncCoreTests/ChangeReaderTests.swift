import Foundation
import Testing
import TipSyncTestSupport

@testable import TipSyncCore

/// ``ChangeReader`` only ever accepts what the general path (``JSONParser`` + ``JSONValueDecoder``)
/// accepts, and gives the same result; everything else goes the general way, with its errors.
@Suite struct ChangeReaderTests {
    struct Refusal: Error, Equatable {
        var text: String
    }

    /// The general path's answer for `text`, or its error's description.
    static func general<Page: ChangePage & Equatable>(_ type: Page.Type, _ text: String) -> Result<Page, Refusal> {
        do {
            return .success(try JSONValueDecoder().decode(type, from: try JSONParser.parse(Array(text.utf8))))
        } catch {
            return .failure(Refusal(text: String(describing: error)))
        }
    }

    static func reader<Page: ChangePage>(_ type: Page.Type, _ text: String) -> Page? {
        Array(text.utf8).withUnsafeBufferPointer { ChangeReader.page(type, from: $0) }
    }

    static func page(
        _ changes: [String], tail: String = #","cursor":"c","more":false,"serverTime":5,"snapshot":false}"#
    )
        -> String
    {
        #"{"changes":["# + changes.joined(separator: ",") + "]" + tail
    }

    @Test func slotsFollowTheMemberNamesOrder() {
        for (index, key) in Change.CodingKeys.allCases.enumerated() { #expect(key.slot == index) }
    }

    /// Every kind of change the protocol allows (non-ASCII names, payloads of every JSON type,
    /// epochs, big and fractional numbers), some with members a newer client added: the reader
    /// reads each page itself and gets exactly what the general path gets.
    @Test(arguments: 0..<60) func readsGeneratedPagesAsTheGeneralPathDoes(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var changes = ProtocolValidChangeTests.changeSet(seed: seed)
        for index in changes.indices where Int.random(in: 0..<6, using: &random) == 0 {
            changes[index].unknownFields = ["zNew": ProtocolValidChangeTests.randomValue(&random)]
            if case .eligibility(_, .eligible) = changes[index].operation {
                changes[index].unknownFields["reason"] = .string("later")
            }
        }
        let text = Self.page(changes.map(\.canonicalJSON))
        let read = try #require(Self.reader(PullResponse.self, text))
        #expect(read.changes == changes)
        #expect(Self.general(PullResponse.self, text) == .success(read))
        let push = PushRequest(changes: changes)
        let body = String(decoding: push.canonicalBody, as: UTF8.self)
        #expect(Self.reader(PushRequest.self, body) == push)
        #expect(try JSONCoding.decode(PushRequest.self, from: Array(body.utf8)) == push)
    }

    @Test func whitespaceAndMemberOrderAreTheJSONsNotTheReaders() throws {
        let text = """
             { "serverTime" : 5 , "changes" : [ { "seq" : 1 , "kind" : "donation" , "event" : "e" ,
              "id" : "a:1" , "date" : 7 , "hlc" : "018bcfe56800-0001" , "device" : "a" } ] ,
              "cursor" : "c" , "more" : false , "snapshot" : false }\t
            """
        let read = try #require(Self.reader(PullResponse.self, text))
        #expect(Self.general(PullResponse.self, text) == .success(read))
        #expect(read.changes.first?.operation == .donation(event: "e", id: "a:1", date: 7, info: nil))
    }

    /// What the reader does not take, it leaves to the general path, whose answer — a page or an
    /// error — `JSONCoding.decode` gives.
    @Test(arguments: [
        // A change member twice, or a page member twice (also in a canonically equivalent spelling).
        page([#"{"device":"a","device":"b","hlc":"018bcfe56800-0001","kind":"datastoreReset","seq":1}"#]),
        #"{"changes":[],"changes":[],"cursor":"c","more":false,"serverTime":5,"snapshot":false}"#,
        #"{"changes":[],"cursor":"c","cursor":"d","more":false,"serverTime":5,"snapshot":false}"#,
        #"{"changes":[],"curso\u0072":"c","cursor":"d","more":false,"serverTime":5,"snapshot":false}"#,
        // A member name written with an escape (the same name), and a refused value.
        page([#"{"d\u0065vice":"a","hlc":"018bcfe56800-0001","kind":"datastoreReset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-0001","kind":"nope","seq":1}"#]),
        page([#"{"device":"a","hlc":"nope","kind":"datastoreReset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-0001","kind":"datastoreReset","seq":1.5}"#]),
        // `hlc` and `kind`, which the reader reads from their bytes: an escape (the same value),
        // another case, a longer or shorter text, a prefix of another kind, not a string.
        page([#"{"device":"a","hlc":"018bcfe56800\u002d0001","kind":"datastoreReset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-0001","kind":"datastore\u0052eset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018BCFE56800-0001","kind":"datastoreReset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-00011","kind":"datastoreReset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-001","kind":"datastoreReset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-0001","kind":"DatastoreReset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-0001","kind":"datastoreResetX","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-0001","kind":"donation","seq":1,"event":"e"}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-0001","kind":5,"seq":1}"#]),
        page([#"{"device":"a","hlc":5,"kind":"datastoreReset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-0001","hlc":"018bcfe56800-0002","kind":"datastoreReset","seq":1}"#]),
        page([#"{"device":"a","hlc":"018bcfe56800-0001","kind":"datastoreReset","kind":"datastoreReset","seq":1}"#]),
        page([#"{"device":7,"hlc":"018bcfe56800-0001","kind":"datastoreReset","seq":1}"#]),
        page([
            #"{"device":"a","hlc":"018bcfe56800-0001","kind":"display","seq":1,"tip":"t","count":1,"duration":1,"lastDisplayed":1,"epoch":null}"#
        ]),
        page([#"{"hlc":"018bcfe56800-0001","kind":"datastoreReset","seq":1}"#]),
        page([#"["not an object"]"#]),
        // Not a page: no changes, changes not an array, text after the value, malformed text.
        #"{"cursor":"c","more":false,"serverTime":5,"snapshot":false}"#,
        #"{"changes":{},"cursor":"c","more":false,"serverTime":5,"snapshot":false}"#,
        page([]) + " x",
        page([#"{"device":"a","hlc":"018bcfe56800-0001","kind":"datastoreReset","seq":1"#]),
        #"{"changes":[],"cursor":"c","more":"no","serverTime":5,"snapshot":false}"#,
        "[]",
    ])
    func leavesEverythingElseToTheGeneralPath(text: String) {
        let general = Self.general(PullResponse.self, text)
        if case .success = general {
            // Valid after all (an escaped name is the same name): then the reader may read it too.
            #expect(Self.reader(PullResponse.self, text).map(Result.success) ?? general == general)
        } else {
            #expect(Self.reader(PullResponse.self, text) == nil)
        }
        let decoded: Result<PullResponse, Refusal>
        do {
            decoded = .success(try JSONCoding.decode(PullResponse.self, from: Array(text.utf8)))
        } catch {
            decoded = .failure(Refusal(text: String(describing: error)))
        }
        #expect(decoded == general)
    }

    /// Integers read straight from their digits, at the edges of that fast path.
    @Test func integersAtTheEdgesOfEighteenDigits() throws {
        let numbers = [
            "0", "-0", "7", "-7", "999999999999999999", "-999999999999999999", "1000000000000000000",
            "-1000000000000000000", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "12.0",
            "1e2",
        ]
        for number in numbers {
            let parsed = try JSONParser.parse(Array(number.utf8))
            if let exact = Int64(number) {
                #expect(parsed == .int(exact), "\(number)")
                if case .int = parsed {} else { Issue.record("\(number) parsed as \(parsed)") }
            } else {
                #expect(parsed == .double(Double(number)!), "\(number)")
            }
        }
    }
}
