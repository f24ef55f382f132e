import Testing
import TipSync

/// The live stream's event reader (protocol.md §9): whole events whatever pieces the bytes come in.
@Suite struct ServerSentEventsTests {
    static let stream =
        "event: ready\ndata: {\"cursor\":\"g.0\"}\n\n: heartbeat\n\nevent: changes\r\ndata: {\"changes\":[],\r\n"
        + "data: \"cursor\":\"g.1\"}\r\n\r\nevent: catalog\rdata: {}\r\rdata: plain\n\n"
    static let expected: [ServerSentEvents.Event] = [
        .init(name: "ready", data: #"{"cursor":"g.0"}"#),
        .init(name: "changes", data: "{\"changes\":[],\n\"cursor\":\"g.1\"}"),
        .init(name: "catalog", data: "{}"),
        .init(name: "message", data: "plain"),
    ]

    @Test func eventsComeOutWholeInOnePieceOrByteByByte() {
        var whole = ServerSentEvents()
        #expect(whole.feed(Array(Self.stream.utf8)) == Self.expected)
        var bytes = ServerSentEvents()
        var events: [ServerSentEvents.Event] = []
        for byte in Self.stream.utf8 { events += bytes.feed([byte]) }
        #expect(events == Self.expected)
    }

    @Test func anEventSplitAnywhereEvenBetweenCarriageReturnAndLineFeedIsOneEvent() {
        let bytes = Array(Self.stream.utf8)
        for cut in 1..<bytes.count {
            var reader = ServerSentEvents()
            let events = reader.feed(bytes[..<cut]) + reader.feed(bytes[cut...])
            #expect(events == Self.expected, "cut at \(cut)")
        }
    }
}
