import Hummingbird
import NIOCore
import NIOHTTPTypes
import Synchronization

/// A connection whose first request was `GET /v1/live`, served on its pipeline instead of by a task
/// (``LiveConnectionHandler``): the router answers the request in a task that ends once the stream is
/// open; from then on each wake-up of the stream's subscription starts a short task that writes what
/// it found, and an idle stream costs no task at all — only its connection, its subscription and
/// this. The connection closes when the stream ends, and after any answer that is not a stream.
final class LiveConnection: Sendable {
    /// Answers a request through the application's router, as Hummingbird would (its `Date` and
    /// `Server` headers included); errors become responses.
    typealias Respond = @Sendable (Request, any Channel) async -> Response

    private let channel: any Channel
    private let respond: Respond
    private let state = Mutex(State())

    private struct State {
        var stream: LiveStream?
        /// A task is writing (the opening, or a wake-up's news); wake-ups meanwhile set `again`.
        var writing = true
        var again = false
        /// The stream ended; the connection closes once no task writes.
        var ended = false
        var closed = false
    }

    init(channel: any Channel, respond: @escaping Respond) {
        self.channel = channel
        self.respond = respond
    }

    /// Answers the request; when the answer is a live stream, writes its opening and hands the rest
    /// to the stream's wake-ups.
    func serve(_ head: HTTPRequest) async {
        let handoff = LiveHandoff()
        var response = await LiveHandoff.$current.withValue(handoff) {
            await respond(Request(head: head, body: RequestBody(buffer: ByteBuffer())), channel)
        }
        guard response.status == .ok, let stream = handoff.stream else {
            // Refused (a bad token, a bad cursor, rate limited): answered whole, then closed.
            handoff.stream?.subscription.finish()
            response.headers[.connection] = "close"
            try? await channel.writeAndFlush(HTTPResponsePart.head(response.head)).get()
            try? await response.body.write(ChannelBodyWriter(channel: channel))
            try? await channel.close()
            return
        }
        state.withLock { $0.stream = stream }
        stream.opened()
        do {
            try await channel.writeAndFlush(HTTPResponsePart.head(response.head)).get()
            // Only the opening: the route saw the handoff (``LiveStream/body(handedOff:)``).
            try await response.body.write(ChannelBodyWriter(channel: channel))
        } catch {
            stream.subscription.finish()
        }
        stream.subscription.onTermination { [self] in streamEnded() }
        stream.subscription.onWake { [self] in woken() }
        await writeWhileWoken(stream, first: false)
    }

    /// The server is shutting down gracefully (or the connection must go): end the stream.
    func quiesce() {
        let stream = state.withLock { $0.stream }
        if let stream { stream.subscription.finish() } else { channel.close(promise: nil) }
    }

    private func woken() {
        let stream = state.withLock { state -> LiveStream? in
            guard !state.writing else {
                state.again = true
                return nil
            }
            state.writing = true
            return state.stream
        }
        if let stream { Task { await writeWhileWoken(stream, first: true) } }
    }

    /// Writes wake-ups while they come (`first`: one is due now); called while ``State/writing``.
    private func writeWhileWoken(_ stream: LiveStream, first: Bool) async {
        var write = first
        while true {
            if write {
                var writer: any ResponseBodyWriter = ChannelBodyWriter(channel: channel)
                do { try await stream.wake(&writer) } catch { stream.subscription.finish() }
            }
            let close = state.withLock { state -> Bool? in
                if state.again, !state.ended {
                    state.again = false
                    return nil
                }
                state.writing = false
                guard state.ended, !state.closed else { return false }
                state.closed = true
                return true
            }
            guard let close else {
                write = true
                continue
            }
            if close { end(stream) }
            return
        }
    }

    private func streamEnded() {
        let stream = state.withLock { state -> LiveStream? in
            state.ended = true
            guard !state.writing, !state.closed else { return nil }
            state.closed = true
            return state.stream
        }
        if let stream { end(stream) }
    }

    /// Ends the response and closes the connection.
    private func end(_ stream: LiveStream) {
        stream.closed()
        let channel = channel
        channel.writeAndFlush(HTTPResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
    }
}
