import NIOCore
import Testing
import TipSyncServer
import TipSyncServerTestSupport

/// A page's change texts: joined with commas as a page's `changes` array holds them, and each
/// text back as it went in, however it was added.
@Suite struct ChangeTextsTests {
    static let bodies = [
        #"{"device":"a","hlc":"018bcfe56800-0001","kind":"datastoreReset","seq":1}"#,
        #"{"device":"é,\"x\"","hlc":"018bcfe56800-0002","id":"p","kind":"parameter","seq":2,"value":[1,{"a":","}]}"#,
        "",
    ]

    @Test func joinedWithCommasAndReadBackOneByOne() {
        let texts = ChangeTexts(Self.bodies)
        #expect(texts.count == 3 && !texts.isEmpty)
        #expect(String(buffer: texts.joined) == Self.bodies.joined(separator: ","))
        #expect(texts.bodies == Self.bodies)
    }

    @Test func appendedFromBytesOrBuffersIsTheSame() {
        var fromBytes = ChangeTexts()
        var fromBuffers = ChangeTexts()
        for body in Self.bodies {
            Array(body.utf8).withUnsafeBytes { fromBytes.append($0) }
            fromBuffers.append(ByteBuffer(string: body))
        }
        #expect(fromBytes == ChangeTexts(Self.bodies))
        #expect(fromBuffers == ChangeTexts(Self.bodies))
        #expect(fromBytes.bodies == Self.bodies)
    }

    @Test func empty() {
        let texts = ChangeTexts([])
        #expect(texts.isEmpty && texts.count == 0 && texts.bodies.isEmpty && texts.joined.readableBytes == 0)
        #expect(texts == ChangeTexts())
    }
}
