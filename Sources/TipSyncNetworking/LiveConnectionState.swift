/// The writes of a live connection (``LiveConnection``) as a state machine: events in, actions out,
/// no I/O — so every order of wake-ups, writes and the stream's end can be tried in a test.
///
/// At most one writer at a time (the opening, or a wake-up's news); a wake-up while one writes is
/// remembered and written by that writer before it stops, so none is lost; the connection closes
/// exactly once, after the stream ended and no writer is left.
package struct LiveConnectionState: Sendable, Hashable {
    package enum Phase: Sendable, Hashable {
        /// A writer is writing; `again`: a wake-up came meanwhile.
        case writing(again: Bool)
        /// Nothing to write: the next wake-up starts a writer.
        case idle
        /// The response ended and the connection is closing: nothing more is written.
        case closed
    }

    /// The opening is written first: a connection starts with a writer.
    package private(set) var phase = Phase.writing(again: false)
    /// The stream ended: the connection closes once no writer is left.
    package private(set) var ended = false

    package init() {}

    /// What a wake-up of the stream calls for.
    package enum WakeAction: Sendable, Hashable {
        /// Start a writer: take the stream's news and write it.
        case write
        /// A writer is on it already (it writes the news before it stops), or the connection closed.
        case none
    }

    /// The stream has news.
    package mutating func woken() -> WakeAction {
        switch phase {
        case .writing:
            phase = .writing(again: true)
            return .none
        case .idle:
            phase = .writing(again: false)
            return .write
        case .closed:
            return .none
        }
    }

    /// What a writer does once it wrote what it had.
    package enum AfterWriteAction: Sendable, Hashable {
        /// Wake-ups came meanwhile: take the news again and write it.
        case writeAgain
        /// Stop: the next wake-up starts a writer.
        case stop
        /// The stream ended: end the response and close the connection (this writer is the last).
        case close
    }

    /// The writer wrote what it had.
    package mutating func wrote() -> AfterWriteAction {
        guard case .writing(let again) = phase else { return .stop }
        if again, !ended {
            phase = .writing(again: false)
            return .writeAgain
        }
        if ended {
            phase = .closed
            return .close
        }
        phase = .idle
        return .stop
    }

    /// What the stream's end calls for.
    package enum EndAction: Sendable, Hashable {
        /// No writer: end the response and close the connection now.
        case close
        /// A writer is writing and will close when it is done (``wrote()``); a stream evicted for
        /// its device's newer ones closes its connection now instead, dropping what the write holds.
        case writerCloses
        /// Already closed.
        case none
    }

    /// The stream ended (its client left, the server shuts down, a write failed, it was evicted).
    package mutating func streamEnded() -> EndAction {
        ended = true
        switch phase {
        case .idle:
            phase = .closed
            return .close
        case .writing: return .writerCloses
        case .closed: return .none
        }
    }
}
