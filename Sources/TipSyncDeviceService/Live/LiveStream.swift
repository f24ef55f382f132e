import CoreMetrics
package import Hummingbird
package import NIOCore
import ServiceLifecycle
import Synchronization
import TipSyncNetworking
package import TipSyncServerBasics
package import TipSyncStorage

/// One open live stream (`GET /v1/live`, protocol.md §9): what it writes when it opens and on each
/// wake-up of its ``LiveSubscription``, whoever drives it — a task that reads the wake-ups
/// (``body``), or the connection's pipeline handler, wake-up by wake-up (``LiveConnectionHandler``).
package final class LiveStream: Sendable {
    /// The two modes of protocol.md §9.
    package enum Mode: Sendable {
        /// `event: changes` with `data: {}`: the client pulls.
        case notifyOnly
        /// Each `event: changes` carries the account's changes after the stream's position; `opened`
        /// is the page read when the stream opened (after the subscription, so nothing is missed);
        /// `catalog` the served catalog's version then (`nil`: none), which `ready` names, so a device
        /// that reopens its stream after an outage learns of an upload it missed without a request.
        case carrying(LiveFeed, generation: String, opened: PullPage?, catalog: String?)
    }

    let subscription: LiveSubscription
    /// What the stream carries: `nil` for a notify-only stream.
    private let feed: LiveFeed?
    /// What the opening writes after `ready` (carrying mode), let go once written.
    private let opening: Mutex<Opening?>
    private let metrics: ServerMetrics
    private let now: @Sendable () -> Int64
    /// The log position after the last page written (carrying mode); wake-ups are written one at a
    /// time, so only one of them uses it at once.
    private let position: Mutex<Int64>

    /// The stall bound's watch over this stream's writes, when it has one.
    private let stallWatch: StallWatch?

    package init(
        subscription: LiveSubscription, mode: Mode, position: Int64, metrics: ServerMetrics,
        stall: StallBound? = nil, now: @escaping @Sendable () -> Int64
    ) {
        self.subscription = subscription
        switch mode {
        case .notifyOnly:
            feed = nil
            opening = Mutex(nil)
        case .carrying(let feed, let generation, let opened, let catalog):
            self.feed = feed
            opening = Mutex(Opening(generation: generation, opened: opened, catalog: catalog))
        }
        self.metrics = metrics
        stallWatch = stall.map { StallWatch($0, stalled: metrics.liveStreamsStalled) }
        self.now = now
        self.position = Mutex(position)
    }

    /// `writer`, its writes bounded by the stall bound when the stream has one.
    private func bounded(_ writer: any ResponseBodyWriter) -> any ResponseBodyWriter {
        guard let stallWatch else { return writer }
        return StallBoundWriter(inner: writer, watch: stallWatch)
    }

    /// A carrying stream's opening: its `ready` event's fields and the page read when it opened.
    private struct Opening {
        var generation: String
        var opened: PullPage?
        var catalog: String?
    }

    /// Writes the `ready` event and, when the stream carries changes, what was already there.
    func open(_ writer: inout any ResponseBodyWriter) async throws {
        var writer = bounded(writer)
        guard let feed else {
            try await writer.write(ByteBuffer(string: "event: ready\ndata: {}\n\n"))
            return
        }
        // The page read at the opening is written once; the stream need not hold it for hours.
        if let opening = opening.withLock({ $0.take() }) {
            var position = position.withLock { $0 }
            let version = #","catalog":\#(opening.catalog.map(SyncController.quoted) ?? "null")"#
            try await writer.write(
                ByteBuffer(
                    string: #"event: ready\#ndata: {"cursor":"\#(opening.generation).\#(position)"\#(version)}\#n\#n"#))
            if let opened = opening.opened {
                try await feed.write(LivePages.event(opened, from: position, serverTime: now()), to: &writer)
                position = opened.cursor
                if opened.more { position = try await feed.catchUp(after: position, to: &writer) }
            }
            self.position.withLock { [position] in $0 = position }
        }
    }

    /// What a wake-up found.
    package struct News: Sendable {
        var changes: Bool
        var catalog: Bool
        var heartbeat: Bool

        /// A heartbeat is written only when nothing else is (any write keeps the connection alive).
        var onlyHeartbeat: Bool { heartbeat && !changes && !catalog }
    }

    /// Takes what arrived since the last wake-up; what it found must then be written (``write(_:to:)``
    /// or ``immediate(_:)``), or it is lost.
    package func takeNews() -> News {
        News(
            changes: subscription.takeChanges(), catalog: subscription.takeCatalog(),
            heartbeat: subscription.takeHeartbeat())
    }

    /// Writes what one wake-up found: the news (`changes`, `catalog`), or a heartbeat when it was time
    /// for one and there was no news.
    package func wake(_ writer: inout any ResponseBodyWriter) async throws {
        try await write(takeNews(), to: &writer)
    }

    /// Writes `news` (taken by ``takeNews()``), reading the store when it must.
    package func write(_ news: News, to writer: inout any ResponseBodyWriter) async throws {
        var writer = bounded(writer)
        guard let feed else {
            let bytes = Self.notification(news)
            if bytes.readableBytes > 0 { try await writer.write(bytes) }
            return
        }
        if news.changes {
            let after = position.withLock { $0 }
            let reached = try await feed.catchUp(after: after, to: &writer)
            position.withLock { $0 = reached }
        }
        if news.catalog { try await writer.write(try await feed.catalogEvent()) }
        if news.onlyHeartbeat { try await writer.write(Self.heartbeat) }
    }

    /// The bytes for `news` when they need no store read and no wait — always for a notify-only
    /// stream; for one that carries changes, when every page to the end of the log is at hand
    /// (``LivePages``: pushed on this instance, or read by another stream) — counted as written,
    /// framed as HTTP/1.1 chunks (``HTTPChunk``; a page's framing is shared by every stream that
    /// writes it). `nil`: ``write(_:to:)`` must. An empty buffer: nothing to write.
    package func immediate(_ news: News) -> ByteBuffer? {
        guard let feed else {
            return news.onlyHeartbeat ? Self.heartbeatChunk : HTTPChunk.framed(Self.notification(news))
        }
        guard !news.catalog else { return nil }
        guard news.changes else { return news.onlyHeartbeat ? Self.heartbeatChunk : ByteBuffer() }
        // Pages at hand, chained to the end of the log (pushes that came while the stream was busy);
        // most wake-ups find one, which needs no array.
        var at = position.withLock { $0 }
        var first: LivePages.Page?
        var later: [LivePages.Page] = []
        while true {
            guard let page = feed.readyPage(after: at), page.cursor > at || !page.more else { return nil }
            at = page.cursor
            if page.count > 0 {
                if first == nil { first = page } else { later.append(page) }
            }
            if !page.more { break }
        }
        position.withLock { [at] in $0 = at }
        guard let first else { return ByteBuffer() }
        feed.served(first)
        guard !later.isEmpty else { return first.chunk }
        var bytes = first.chunk
        for page in later {
            feed.served(page)
            bytes.writeImmutableBuffer(page.chunk)
        }
        return bytes
    }

    private static let heartbeat = ByteBuffer(string: ": heartbeat\n\n")
    private static let heartbeatChunk = HTTPChunk.framed(heartbeat)

    /// A notify-only stream's events for `news` (protocol.md §9), or its heartbeat (may be empty).
    private static func notification(_ news: News) -> ByteBuffer {
        var text = ""
        if news.changes { text += "event: changes\ndata: {}\n\n" }
        if news.catalog { text += "event: catalog\ndata: {}\n\n" }
        return news.onlyHeartbeat ? heartbeat : ByteBuffer(string: text)
    }

    /// Counts the stream as open (`tipsync_live_connections`) until ``closed()``, and where it is
    /// served (`tipsync_live_streams_opened_total`).
    package func opened(onPipeline: Bool) {
        metrics.liveConnections.increment()
        (onPipeline ? metrics.liveStreamsOnPipeline : metrics.liveStreamsOnConnectionTask).increment()
    }

    package func closed() { metrics.liveConnections.decrement() }

    /// The stream written by the task that writes the response, reading the wake-ups until the stream
    /// ends. `handedOff`: the connection's pipeline handler writes everything after the opening
    /// (``LiveHandoff``), and this task ends once the stream is open.
    func body(handedOff: Bool) -> ResponseBody {
        ResponseBody { [self] writer in
            guard !handedOff else {
                try await open(&writer)
                return
            }
            opened(onPipeline: false)
            defer { closed() }
            let subscription = subscription
            // The server's graceful shutdown waits for open requests: end the stream when it begins.
            try await withGracefulShutdownHandler {
                try await open(&writer)
                for await _ in subscription.wakeUps { try await wake(&writer) }
            } onGracefulShutdown: {
                subscription.finish()
            }
            try await writer.finish(nil)
        }
    }
}
