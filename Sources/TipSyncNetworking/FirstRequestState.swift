package import NIOCore

/// What ``FirstRequestSniffer`` knows of its connection, as a state machine: events in (opened,
/// bytes read, the handlers installed, closed, the peer or the server leaving), actions out — no
/// channel, so each order of events is tried in a test (`FirstRequestStateTests`).
///
/// A connection waits for the first bytes that show where its first request goes (``route(of:)``),
/// keeping what it read; then the handlers for that route are installed, and once they are, the
/// bytes are passed to them and the sniffer leaves. A connection that closes before its route is
/// known was abandoned; one whose peer half-closes, or whose server quiesces, before then is closed.
package struct FirstRequestState: Sendable {
    /// Where a connection's first request goes.
    package enum Route: Equatable, Sendable {
        /// Hummingbird's HTTP/1.1 connection task.
        case http
        /// `GET /v1/live`: served on the connection's pipeline (``LiveConnectionHandler``).
        case live
    }

    package enum Phase: Sendable {
        /// Before the route is known: what was read so far.
        case waiting(read: ByteBuffer?)
        /// The route is known and its handlers are being installed; what was read waits for them.
        case installing(Route, read: ByteBuffer)
        /// Handed over (or closed): nothing more is the sniffer's.
        case done
    }

    package private(set) var phase = Phase.waiting(read: nil)
    /// When the connection opened (the request head's deadline counts from here); `nil` until it did.
    package private(set) var openedAt: NIODeadline?

    package init() {}

    /// Whether the route is decided (from then on events pass through to the handlers behind).
    package var decided: Bool {
        if case .waiting = phase { return false }
        return true
    }

    /// The connection opened at `now`: whether to start the request head's timer (once, and only
    /// while waiting).
    package mutating func opened(at now: NIODeadline) -> Bool {
        guard openedAt == nil, case .waiting = phase else { return false }
        openedAt = now
        return true
    }

    /// What bytes read call for.
    package enum ReadAction: Sendable, Equatable {
        /// Not enough to tell: keep reading.
        case wait
        /// Cancel the timer and install `route`'s handlers; the bytes wait for them.
        case install(Route)
        /// Decided already: the bytes are kept for the handlers being installed.
        case none
    }

    /// The peer sent `bytes`.
    package mutating func read(_ bytes: ByteBuffer) -> ReadAction {
        switch phase {
        case .waiting(var read):
            var bytes = bytes
            if read == nil { read = bytes } else { read!.writeBuffer(&bytes) }
            guard let route = Self.route(of: read!.readableBytesView) else {
                phase = .waiting(read: read)
                return .wait
            }
            phase = .installing(route, read: read!)
            return .install(route)
        case .installing(let route, var read):
            var bytes = bytes
            read.writeBuffer(&bytes)
            phase = .installing(route, read: read)
            return .none
        case .done:
            return .none
        }
    }

    /// The handlers are installed: what to pass them (when the connection opened, and what was
    /// read), after which the sniffer leaves. `nil` when there is nothing to hand over.
    package mutating func installed() -> (openedAt: NIODeadline?, read: ByteBuffer)? {
        guard case .installing(_, let read) = phase else { return nil }
        phase = .done
        return (openedAt, read)
    }

    /// The connection closed: whether it was abandoned before its route was known.
    package mutating func closed() -> Bool {
        defer { phase = .done }
        if case .waiting = phase { return true }
        return false
    }

    /// The peer half-closed, or the server quiesces: whether to close the connection now (before the
    /// route is known; after, the handlers behind decide).
    package func closesOnLeaving() -> Bool { !decided }

    private static let live = Array("GET /v1/live".utf8)

    /// The route of a connection whose first bytes are `bytes`; `nil` until they tell.
    package static func route(of bytes: some Collection<UInt8>) -> Route? {
        var index = bytes.startIndex
        for expected in live {
            guard index != bytes.endIndex else { return nil }
            guard bytes[index] == expected else { return .http }
            index = bytes.index(after: index)
        }
        guard index != bytes.endIndex else { return nil }
        // `GET /v1/live HTTP/1.1` or `GET /v1/live?cursor=…`, not `GET /v1/lively`.
        return bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "?") ? .live : .http
    }
}
