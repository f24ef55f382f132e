package import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Synchronization

/// A connection whose first request was `GET /v1/live`, served on its pipeline instead of by a task
/// (``LiveConnectionHandler``): the router answers the request in a task that ends once the stream is
/// open; from then on each wake-up of the stream's subscription is written on the connection's event
/// loop (a short task only when it needs the store), and an idle stream costs no task at all — only
/// its connection, its subscription and this. The answer says `Connection: close`: the connection
/// closes when the stream ends, and after any answer that is not a stream.
///
/// What a wake-up writes at once comes framed as HTTP/1.1 chunks (``HTTPChunk``) and goes to the
/// socket below the response encoder: a page written to a thousand streams is framed once, and no
/// stream's write passes the HTTP handlers (14% of a 1,002-stream delivery's samples, profiled).
/// The head, the opening, what a task writes and the end pass through them as any answer does.
package final class LiveConnection: Sendable {
    /// Answers a request through the application's router, as Hummingbird would (its `Date` and
    /// `Server` headers included); errors become responses.
    package typealias Respond = @Sendable (Request, any Channel) async -> Response

    private let channel: any Channel
    private let respond: Respond
    private let state = Mutex(State())
    /// The response encoder's place in the pipeline, found on the first framed write: writes from
    /// there reach the socket (through TLS, when it is there) without being encoded again.
    private let encoder: NIOLoopBoundBox<ChannelHandlerContext?>

    private struct State {
        var stream: (any PipelinedStream)?
        /// Who writes, and when the connection closes (``LiveConnectionState``).
        var writes = LiveConnectionState()
    }

    init(channel: any Channel, respond: @escaping Respond) {
        self.channel = channel
        self.respond = respond
        encoder = .makeEmptyBox(valueType: ChannelHandlerContext.self, eventLoop: channel.eventLoop)
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
            handoff.stream?.finish()
            response.headers[.connection] = "close"
            try? await channel.writeAndFlush(HTTPResponsePart.head(response.head)).get()
            try? await response.body.write(ChannelBodyWriter(channel: channel))
            try? await channel.close()
            return
        }
        await serve(stream, response)
    }

    /// Writes the opening of `stream`, answered by `response`, and hands the rest to its wake-ups.
    private func serve<Stream: PipelinedStream>(_ stream: Stream, _ response: Response) async {
        var response = response
        state.withLock { $0.stream = stream }
        stream.opened(onPipeline: true)
        // From before the opening: a stream evicted while its opening waits for a client that does
        // not read closes its connection at once.
        stream.onTermination { [self] in streamEnded() }
        // Said up front, so the client never pools the connection: closing one that an HTTP client
        // holds as idle and reusable left FoundationNetworking's socket in CLOSE-WAIT, its event
        // source spinning and the next stream unread (a test hung in CI).
        response.headers[.connection] = "close"
        do {
            // The head leaves with the opening's first write (`event: ready`), in one segment: a
            // flush of its own cost a write to the socket and a wait for the loop per opening.
            channel.write(HTTPResponsePart.head(response.head), promise: nil)
            // Only the opening: the route saw the handoff (``LiveStream/body(handedOff:)``).
            try await response.body.write(ChannelBodyWriter(channel: channel))
        } catch {
            stream.finish()
        }
        stream.onWake { [self] in woken() }
        channel.eventLoop.execute { [self] in
            // A body that wrote nothing left the head unflushed: it goes now, before any news.
            channel.flush()
            deliver(stream, nil)
        }
    }

    /// The server is shutting down gracefully (or the connection must go): end the stream.
    func quiesce() {
        let stream = state.withLock { $0.stream }
        if let stream { stream.finish() } else { channel.close(promise: nil) }
    }

    private func woken() {
        let stream = state.withLock { state -> (any PipelinedStream)? in
            state.writes.woken() == .write ? state.stream : nil
        }
        // On the connection's event loop: its writes need no further hop, and wake-ups that come
        // while the loop is busy (a burst of pushes) are written together.
        if let stream { channel.eventLoop.execute { [self] in deliverNews(of: stream) } }
    }

    private func deliverNews<Stream: PipelinedStream>(of stream: Stream) {
        deliver(stream, stream.takeNews())
    }

    /// Writes `news`, then whatever wake-ups came meanwhile, as the writer, on the connection's
    /// event loop. What needs no store read is written at once (no task); anything else, or a
    /// connection whose client reads slowly, continues in a task that awaits the store and slow writes.
    private func deliver<Stream: PipelinedStream>(_ stream: Stream, _ news: Stream.News?) {
        guard channel.eventLoop.inEventLoop else {
            channel.eventLoop.execute { [self] in deliver(stream, news) }
            return
        }
        var news = news
        while true {
            if let due = news {
                guard channel.isWritable, let bytes = stream.immediate(due) else {
                    Task { await write(due, stream) }
                    return
                }
                // A write that fails fails because the connection closed, which ends the stream.
                if bytes.readableBytes > 0 { writeFramed(bytes) }
            }
            switch state.withLock({ $0.writes.wrote() }) {
            case .writeAgain: news = stream.takeNews()
            case .stop: return
            case .close:
                end(stream)
                return
            }
        }
    }

    /// Writes bytes framed as chunks of the response body to the socket, on the event loop.
    private func writeFramed(_ bytes: ByteBuffer) {
        if encoder.value == nil {
            encoder.value = try? channel.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        }
        // No encoder, no HTTP/1.1 framing to write into: the pipeline is not a live connection's.
        guard let context = encoder.value else { return channel.close(promise: nil) }
        context.writeAndFlush(NIOAny(bytes), promise: nil)
    }

    /// ``deliver(_:_:)``'s slow half: writes `news` awaiting the store and each write, then goes on.
    private func write<Stream: PipelinedStream>(_ news: Stream.News, _ stream: Stream) async {
        var writer: any ResponseBodyWriter = ChannelBodyWriter(channel: channel)
        do { try await stream.write(news, to: &writer) } catch { stream.finish() }
        deliver(stream, nil)
    }

    private func streamEnded() {
        let (action, stream) = state.withLock { ($0.writes.streamEnded(), $0.stream) }
        switch action {
        case .close: if let stream { end(stream) }
        case .writerCloses:
            // Ended because its device opened more streams than it may hold, while a write still
            // waits (for a client that does not read, most likely): the connection closes now, and
            // what the write holds goes with it, instead of at the stall bound. Other ends let the
            // write finish.
            if stream?.wasEvicted ?? false { channel.close(promise: nil) }
        case .none: break
        }
    }

    /// Ends the response and closes the connection.
    private func end(_ stream: any PipelinedStream) {
        stream.closed()
        let channel = channel
        channel.writeAndFlush(HTTPResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
    }
}
