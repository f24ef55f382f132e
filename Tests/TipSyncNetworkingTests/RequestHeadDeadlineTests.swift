import HTTPTypes
import Metrics
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Testing

@testable import TipSyncNetworking

/// The request head's deadline counts from the connection's start, however slowly its request line
/// arrives (issue 59, item 6): a request line sent a byte at a time stretched the 10 s head timeout
/// to ~15 s — the ``FirstRequestSniffer``'s wait, then a whole new one in the ``ConnectionGuard`` it
/// handed over to. Tested as the pipeline's state machines, on an `EmbeddedChannel` whose clock the
/// test moves.
@Suite struct RequestHeadDeadlineTests {
    let limits = ConnectionGuard.Limits(requestHead: .seconds(10), requestBody: .seconds(30), maxBodyBytes: 1 << 20)

    /// A channel with the sniffer in front; once it decides, the HTTP decoder and the guard go in
    /// behind it, as ``SyncServerChannel`` installs them.
    func connection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let metrics = ConnectionMetrics(factory: NOOPMetricsHandler.instance)
        let idle = IdleConnections()
        let limits = limits
        let sniffer = FirstRequestSniffer(
            limits: limits, metrics: metrics, idle: idle,
            install: { _, context in
                let channel = context.channel
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                    try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectionGuard(limits: limits, metrics: metrics, idle: idle, now: { 0 }))
                }
            },
            abandoned: {})
        try channel.pipeline.syncOperations.addHandler(sniffer)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
        return channel
    }

    func send(_ text: String, to channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    @Test func aRequestLineSentSlowlyIsCutTenSecondsAfterTheConnectionOpened() throws {
        let channel = try connection()
        let loop = channel.embeddedEventLoop
        try send("GET /v1/l", to: channel)  // not yet telling where it goes
        loop.advanceTime(by: .seconds(6))
        #expect(channel.isActive)
        try send("ist HTTP/1.1\r\nHost: x\r\n", to: channel)  // now it does: handed to the guard
        loop.advanceTime(by: .seconds(3))
        #expect(channel.isActive)  // 9 s after it opened
        loop.advanceTime(by: .milliseconds(1_001))
        #expect(!channel.isActive, "still open 10 s after the connection opened, the head incomplete")
    }

    @Test func aHeadThatCompletesInTimeIsServedAndTheNextOneGetsItsOwnTenSeconds() throws {
        let channel = try connection()
        let loop = channel.embeddedEventLoop
        try send("GET /health HTTP/1.1\r\n", to: channel)
        loop.advanceTime(by: .seconds(9))
        try send("Host: x\r\n\r\n", to: channel)
        #expect(channel.isActive)
        let head = try channel.readInbound(as: HTTPRequestPart.self)
        guard case .head(let request) = head else {
            Issue.record("no request head: \(String(describing: head))")
            return
        }
        #expect(request.path == "/health")
        loop.advanceTime(by: .seconds(5))
        #expect(channel.isActive)  // a request in progress: the head deadline no longer applies
        _ = try? channel.finish()
    }

    @Test func aConnectionThatSaysNothingIsClosedAtItsDeadline() throws {
        let channel = try connection()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(9_999))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    /// The sniffer's timer is forgotten, not cancelled, once the route is known (``ConnectionTimer``):
    /// when it fires, it must find nothing to do.
    @Test func theSniffersForgottenTimerDoesNotCutARequestInProgress() throws {
        let channel = try connection()
        let loop = channel.embeddedEventLoop
        loop.advanceTime(by: .seconds(2))
        try send("POST /v1/push HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", to: channel)
        loop.advanceTime(by: .seconds(9))  // past the sniffer's 10 s; the body has 30 s
        #expect(channel.isActive)
        _ = try? channel.finish()
    }
}

/// ``ConnectionTimer``: only the latest timer acts, a forgotten one does nothing, and a timer does not
/// keep its handler alive.
@Suite struct ConnectionTimerTests {
    final class Handler {
        var timer = ConnectionTimer<Handler>()
        var fired: [Int] = []

        func set(in amount: TimeAmount, _ context: ChannelHandlerContext, tag: Int) {
            timer.set(at: context.eventLoop.now + amount, handler: self, context: context) { handler, _, generation in
                if handler.timer.fired(generation) { handler.fired.append(tag) }
            }
        }
    }

    final class Holder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
    }

    func context() throws -> (EmbeddedChannel, ChannelHandlerContext) {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(Holder())
        return (channel, try channel.pipeline.syncOperations.context(handlerType: Holder.self))
    }

    @Test func onlyTheLatestTimerActsAndAForgottenOneDoesNothing() throws {
        let (channel, context) = try context()
        let handler = Handler()
        handler.set(in: .seconds(10), context, tag: 1)
        handler.set(in: .seconds(5), context, tag: 2)  // replaces the first
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(handler.fired == [2])
        handler.set(in: .seconds(5), context, tag: 3)
        handler.timer.forget()
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(handler.fired == [2])
        #expect(!handler.timer.isSet)
    }

    @Test func aPendingTimerDoesNotKeepItsHandlerAlive() throws {
        let (channel, context) = try context()
        weak var released: Handler?
        do {
            let handler = Handler()
            released = handler
            handler.set(in: .seconds(10), context, tag: 1)
        }
        #expect(released == nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))  // fires and finds no handler
    }
}
