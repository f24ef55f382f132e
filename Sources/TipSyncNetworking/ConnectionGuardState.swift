package import NIOCore

/// What ``ConnectionGuard`` knows of its connection, as a state machine: events in (a request's head
/// and end, the answer's head and end, a parse error, the connection's opening, the timer), actions
/// out — no channel, so each order of events is tried in a test (`ConnectionGuardStateTests`).
///
/// One deadline is armed at a time: a complete request head within `requestHead` of the
/// connection's start or of the end of its previous answer, a request's body within `requestBody`
/// of its head. A refusal (a declared body over the limit, `CONNECT`, a request the parser cannot
/// read) is final: everything the peer sends after it is ignored, and whatever the router still
/// writes for it is dropped.
package struct ConnectionGuardState: Sendable {
    /// What must arrive by the deadline.
    package enum Phase: String, Sendable {
        case head, body
    }

    /// The limits the deadlines and the declared body are held to.
    package let requestHead: TimeAmount
    package let requestBody: TimeAmount
    package let maxBodyBytes: Int

    /// The phase armed and its deadline (`nil`: nothing is awaited).
    package private(set) var deadline: (phase: Phase, at: NIODeadline)?
    /// Requests whose head was read and whose answer has not ended.
    package private(set) var openRequests = 0
    package private(set) var readingBody = false
    /// A request was refused here; the connection is closing.
    package private(set) var refused = false
    /// Whether the current request's answer has begun (its final head was written).
    package private(set) var answering = false

    package init(requestHead: TimeAmount, requestBody: TimeAmount, maxBodyBytes: Int) {
        self.requestHead = requestHead
        self.requestBody = requestBody
        self.maxBodyBytes = maxBodyBytes
    }

    /// Why a request is refused here, answered as the protocol's JSON error and closed.
    package enum Refusal: Sendable, Equatable {
        /// A declared `Content-Length` above the limit: `413 body_too_large`.
        case declaredTooLarge(String)
        /// `CONNECT`: `405 method_not_allowed`.
        case connect
        /// A method the parser does not know: `405 method_not_allowed`.
        case unknownMethod
        /// A head, or a body's framing before the answer began, the parser cannot read (what the
        /// parser said): `400 malformed_request`.
        case malformed(String)
    }

    /// The connection is active (or the guard joined an active one) at `now`: a request head is awaited.
    package mutating func active(at now: NIODeadline) {
        deadline = (.head, now + requestHead)
    }

    /// The sniffer that handed the connection over says it opened at `at`, earlier: the first request
    /// head's deadline counts from then, while that head is still awaited.
    package mutating func openedEarlier(at: NIODeadline) {
        guard openRequests == 0, deadline?.phase == .head else { return }
        deadline = (.head, at + requestHead)
    }

    /// What a request's head calls for.
    package enum HeadAction: Sendable, Equatable {
        /// Refused: answer and close.
        case refuse(Refusal)
        /// Passed on to the router; `sendContinue`: answer `100 Continue` first.
        case admit(sendContinue: Bool)
        /// The connection is closing after a refusal: dropped.
        case drop
    }

    /// A request's head arrived at `now`.
    package mutating func requestHead(
        contentLength: String?, isConnect: Bool, expectsContinue: Bool, at now: NIODeadline
    ) -> HeadAction {
        guard !refused else { return .drop }
        deadline = nil
        if let contentLength, Self.exceeds(contentLength, maxBodyBytes) {
            refused = true
            return .refuse(.declaredTooLarge(contentLength))
        }
        if isConnect {
            refused = true
            return .refuse(.connect)
        }
        openRequests += 1
        readingBody = true
        answering = false
        deadline = (.body, now + requestBody)
        return .admit(sendContinue: expectsContinue)
    }

    /// Whether a part of a request's body is passed on (it is not after a refusal).
    package func passesBody() -> Bool { !refused }

    /// A request's end arrived; whether it is passed on.
    package mutating func requestEnd() -> Bool {
        guard !refused else { return false }
        deadline = nil
        readingBody = false
        return true
    }

    /// What a part of the answer calls for.
    package enum WriteAction: Sendable, Equatable {
        /// Write it.
        case write
        /// The connection is closing after a refusal: fail the write.
        case drop
    }

    /// The router writes the answer's final head (`informational`: a `1xx`), at `now`.
    package mutating func answerHead(informational: Bool) -> WriteAction {
        guard !refused else { return .drop }
        if !informational { answering = true }
        return .write
    }

    /// The router writes a body part of the answer.
    package func answerBody() -> WriteAction { refused ? .drop : .write }

    /// The router ends an answer at `now`: the next request head is awaited once no request is open.
    package mutating func answerEnd(at now: NIODeadline) -> WriteAction {
        guard !refused else { return .drop }
        openRequests = max(0, openRequests - 1)
        if openRequests == 0, !readingBody { deadline = (.head, now + requestHead) }
        return .write
    }

    /// What a parse error calls for.
    package enum ParseErrorAction: Sendable, Equatable {
        /// Answer the refusal and close.
        case refuse(Refusal)
        /// An answer is under way (or the connection is closing): only closing is left.
        case close
    }

    /// The parser could not read the request (`invalidMethod`: its method), saying `description`.
    package mutating func parseError(invalidMethod: Bool, description: String) -> ParseErrorAction {
        // A head that cannot be read, or a body whose framing breaks before its answer began (a
        // bad chunk size): answered. Once an answer is under way, only closing is left.
        let bodyBeforeAnswer = openRequests == 1 && readingBody && !answering
        guard openRequests == 0 || bodyBeforeAnswer, !refused else { return .close }
        refused = true
        deadline = nil
        return .refuse(invalidMethod ? .unknownMethod : .malformed(description))
    }

    /// What the timer calls for when it fires at `now`.
    package enum TimerAction: Sendable, Equatable {
        /// Nothing is awaited.
        case none
        /// The deadline moved later since the timer was set: set it again for then.
        case reschedule(NIODeadline)
        /// The deadline passed: close the connection (counted as a `phase` timeout).
        case close(Phase)
    }

    /// The timer fired at `now`.
    package mutating func timerFired(at now: NIODeadline) -> TimerAction {
        guard let deadline else { return .none }
        guard deadline.at <= now else { return .reschedule(deadline.at) }
        self.deadline = nil
        return .close(deadline.phase)
    }

    /// The connection closed or the guard left: nothing is awaited any more.
    package mutating func stopped() {
        deadline = nil
    }

    /// Whether a `Content-Length` value is above `limit` (digits only; too many digits to parse is above).
    package static func exceeds(_ declared: String, _ limit: Int) -> Bool {
        let digits = declared.trimmingHTTPWhitespace
        // Anything but digits: the parser refuses it.
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
        guard let value = Int(digits) else { return true }
        return value > limit
    }
}
