import NIOCore
import Testing
import TipSyncNetworking

/// ``FirstRequestState``: where a connection's first request goes, decided from bytes however they
/// arrive, and what is handed to the handlers installed for it.
@Suite struct FirstRequestStateTests {
    let start = NIODeadline.uptimeNanoseconds(1_000)

    @Test func bytesThatArriveInPiecesAreKeptAndHandedOverWhole() {
        var state = FirstRequestState()
        #expect(state.opened(at: start) == true)
        #expect(state.opened(at: start + .seconds(1)) == false)  // one timer, from the first opening
        #expect(state.read(ByteBuffer(string: "GE")) == .wait)
        #expect(state.read(ByteBuffer(string: "T /v1/li")) == .wait)
        #expect(!state.decided)
        #expect(state.read(ByteBuffer(string: "ve?cursor=")) == .install(.live))
        #expect(state.decided)
        // Bytes that come while the handlers are installed wait with the rest.
        #expect(state.read(ByteBuffer(string: "3 HTTP/1.1\r\n")) == .none)
        let handed = state.installed()
        #expect(handed?.openedAt == start)
        #expect(
            handed.map { String(decoding: $0.read.readableBytesView, as: UTF8.self) }
                == "GET /v1/live?cursor=3 HTTP/1.1\r\n")
        #expect(state.installed() == nil)  // handed over once
        #expect(state.closed() == false)  // not abandoned: it spoke
    }

    @Test(arguments: [
        ("P", FirstRequestState.Route.http), ("GET /v1/pull", .http), ("GET /v1/lively", .http),
        ("GET /v1/live ", .live), ("GET /v1/live?", .live), ("GET /v1/LIVE ", .http),
    ])
    func theFirstBytesThatTellDecide(text: String, route: FirstRequestState.Route) {
        var state = FirstRequestState()
        #expect(state.read(ByteBuffer(string: text)) == .install(route))
    }

    @Test func aConnectionThatClosesBeforeItsRouteIsKnownWasAbandonedOnce() {
        var state = FirstRequestState()
        _ = state.opened(at: start)
        _ = state.read(ByteBuffer(string: "GET"))
        #expect(state.closesOnLeaving())  // a half-close or a quiesce closes it
        #expect(state.closed() == true)
        #expect(state.closed() == false)
        #expect(state.opened(at: start) == false)  // closed: no timer
        #expect(state.read(ByteBuffer(string: " /")) == .none)
    }

    @Test func afterTheDecisionLeavingIsTheHandlersBehindToHandle() {
        var state = FirstRequestState()
        _ = state.read(ByteBuffer(string: "GET /v1/pull"))
        #expect(!state.closesOnLeaving())
        #expect(state.closed() == false)
    }
}
