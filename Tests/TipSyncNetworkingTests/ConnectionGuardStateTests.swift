import NIOCore
import Testing
import TipSyncNetworking

/// ``ConnectionGuardState``: the deadline armed for each phase of a keep-alive connection, the
/// refusals, and that nothing passes once one was made.
@Suite struct ConnectionGuardStateTests {
    let start = NIODeadline.uptimeNanoseconds(100_000_000_000)

    func fresh() -> ConnectionGuardState {
        var state = ConnectionGuardState(requestHead: .seconds(10), requestBody: .seconds(30), maxBodyBytes: 1000)
        state.active(at: start)
        return state
    }

    @Test func eachPhaseOfAKeepAliveConnectionArmsItsDeadline() {
        var state = fresh()
        #expect(state.deadline?.phase == .head)
        #expect(state.deadline?.at == start + .seconds(10))
        let head = state.requestHead(
            contentLength: "12", isConnect: false, expectsContinue: true, at: start + .seconds(1))
        #expect(head == .admit(sendContinue: true))
        #expect(state.deadline?.phase == .body)
        #expect(state.deadline?.at == start + .seconds(31))
        #expect(state.requestEnd() == true)
        #expect(state.deadline == nil)  // the router answers: nothing is awaited of the peer
        #expect(state.answerHead(informational: false) == .write)
        #expect(state.answerEnd(at: start + .seconds(2)) == .write)
        #expect(state.deadline?.phase == .head)  // the next request's head, from the answer's end
        #expect(state.deadline?.at == start + .seconds(12))
    }

    @Test func theTimerClosesOnlyWhenTheDeadlineHasPassed() {
        var state = fresh()
        #expect(state.timerFired(at: start + .seconds(5)) == .reschedule(start + .seconds(10)))
        #expect(state.timerFired(at: start + .seconds(10)) == .close(.head))
        #expect(state.timerFired(at: start + .seconds(11)) == .none)
    }

    @Test func theSniffersOpeningTimeCountsOnlyWhileTheFirstHeadIsAwaited() {
        var state = fresh()
        state.openedEarlier(at: start - .seconds(4))
        #expect(state.deadline?.at == start + .seconds(6))
        _ = state.requestHead(contentLength: nil, isConnect: false, expectsContinue: false, at: start)
        state.openedEarlier(at: start - .seconds(9))
        #expect(state.deadline?.phase == .body)  // a request is open: its body's deadline stays
    }

    @Test func aRefusalIsFinal() {
        var state = fresh()
        #expect(
            state.requestHead(contentLength: " 1001 ", isConnect: false, expectsContinue: false, at: start)
                == .refuse(.declaredTooLarge(" 1001 ")))
        #expect(state.deadline == nil)
        #expect(state.requestHead(contentLength: nil, isConnect: false, expectsContinue: false, at: start) == .drop)
        #expect(state.passesBody() == false)
        #expect(state.requestEnd() == false)
        #expect(state.answerHead(informational: false) == .drop)  // what the router still writes is dropped
        #expect(state.answerEnd(at: start) == .drop)
        #expect(state.parseError(invalidMethod: false, description: "x") == .close)

        var connect = fresh()
        #expect(
            connect.requestHead(contentLength: nil, isConnect: true, expectsContinue: false, at: start)
                == .refuse(.connect))
    }

    @Test func aParseErrorIsAnsweredOnlyBeforeAnAnswerBegan() {
        var idle = fresh()
        #expect(idle.parseError(invalidMethod: true, description: "m") == .refuse(.unknownMethod))

        var body = fresh()
        _ = body.requestHead(contentLength: nil, isConnect: false, expectsContinue: false, at: start)
        #expect(body.parseError(invalidMethod: false, description: "chunk") == .refuse(.malformed("chunk")))

        var answering = fresh()
        _ = answering.requestHead(contentLength: nil, isConnect: false, expectsContinue: false, at: start)
        _ = answering.answerHead(informational: true)  // a 100 Continue is not the answer
        _ = answering.answerHead(informational: false)
        #expect(answering.parseError(invalidMethod: false, description: "chunk") == .close)
    }

    @Test(arguments: [
        ("1000", false), ("1001", true), ("\t1001", true), ("", false), ("1e3", false), ("99999999999999999999", true),
    ])
    func aDeclaredLengthIsReadAsDigitsOnly(declared: String, exceeds: Bool) {
        #expect(ConnectionGuardState.exceeds(declared, 1000) == exceeds)
    }
}
