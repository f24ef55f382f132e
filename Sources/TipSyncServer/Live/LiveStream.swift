import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

/// One open live stream (`GET /v1/live`, protocol.md §9): what it writes when it opens and on each
/// wake-up of its ``LiveSubscription``, whoever drives it — a task that reads the wake-ups
/// (``body``), or the connection's pipeline handler, wake-up by wake-up (``LiveConnectionHandler``).
final class LiveStream: Sendable {
    /// The two modes of protocol.md §9.
    enum Mode: Sendable {
        /// `event: changes` with `data: {}`: the client pulls.
        case notifyOnly
        /// Each `event: changes` carries the account's changes after the stream's position; `opened`
        /// is the page read when the stream opened (after the subscription, so nothing is missed).
        case carrying(LiveFeed, generation: String, opened: PullPage?)
    }

    let subscription: LiveSubscription
    private let mode: Mode
    private let metrics: ServerMetrics
    private let now: @Sendable () -> Int64
    /// The log position after the last page written (carrying mode); wake-ups are written one at a
    /// time, so only one of them uses it at once.
    private let position: Mutex<Int64>

    init(
        subscription: LiveSubscription, mode: Mode, position: Int64, metrics: ServerMetrics,
        now: @escaping @Sendable () -> Int64
    ) {
        self.subscription = subscription
        self.mode = mode
        self.metrics = metrics
        self.now = now
        self.position = Mutex(position)
    }

    /// Writes the `ready` event and, when the stream carries changes, what was already there.
    func open(_ writer: inout any ResponseBodyWriter) async throws {
        switch mode {
        case .notifyOnly:
            try await writer.write(ByteBuffer(string: "event: ready\ndata: {}\n\n"))
        case .carrying(let feed, let generation, let opened):
            var position = position.withLock { $0 }
            try await writer.write(
                ByteBuffer(string: #"event: ready\#ndata: {"cursor":"\#(generation).\#(position)"}\#n\#n"#))
            if let opened {
                try await feed.write(LivePages.event(opened, from: position, serverTime: now()), to: &writer)
                position = opened.cursor
                if opened.more { position = try await feed.catchUp(after: position, to: &writer) }
            }
            self.position.withLock { [position] in $0 = position }
        }
    }

    /// Writes what one wake-up found: the news (`changes`, `catalog`), or else a heartbeat.
    func wake(_ writer: inout any ResponseBodyWriter) async throws {
        let changes = subscription.takeChanges()
        let catalog = subscription.takeCatalog()
        switch mode {
        case .notifyOnly:
            if changes { try await writer.write(ByteBuffer(string: "event: changes\ndata: {}\n\n")) }
            if catalog { try await writer.write(ByteBuffer(string: "event: catalog\ndata: {}\n\n")) }
        case .carrying(let feed, _, _):
            if changes {
                let after = position.withLock { $0 }
                let reached = try await feed.catchUp(after: after, to: &writer)
                position.withLock { $0 = reached }
            }
            if catalog { try await writer.write(try await feed.catalogEvent()) }
        }
        if !changes, !catalog { try await writer.write(ByteBuffer(string: ": heartbeat\n\n")) }
    }

    /// Counts the stream as open (`tipsync_live_connections`) until ``closed()``.
    func opened() { metrics.liveConnections.increment() }

    func closed() { metrics.liveConnections.decrement() }

    /// The stream written by the task that writes the response, reading the wake-ups until the stream
    /// ends. `handedOff`: the connection's pipeline handler writes everything after the opening
    /// (``LiveHandoff``), and this task ends once the stream is open.
    func body(handedOff: Bool) -> ResponseBody {
        ResponseBody { [self] writer in
            guard !handedOff else {
                try await open(&writer)
                return
            }
            opened()
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
