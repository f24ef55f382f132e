public import NIOCore
import NIOPosix

/// A slow network between a device and a server, for tests of what a device does while its
/// requests are on the way: a TCP relay on 127.0.0.1 that delivers every byte, in order, `oneWay`
/// after it arrived, in each direction (a round trip costs `2 × oneWay` more than without it).
/// Closing either side closes the other after the same delay.
public final class SlowLink: Sendable {
    /// The port devices connect to instead of the server's.
    public let port: Int
    let group: MultiThreadedEventLoopGroup
    let listener: any Channel

    /// Starts relaying from a new port to `upstreamPort` on 127.0.0.1.
    public init(to upstreamPort: Int, oneWay: TimeAmount) async throws {
        // One thread: every delayed write is scheduled on one loop, so order is kept.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { device in
                ClientBootstrap(group: device.eventLoop)
                    .connect(host: "127.0.0.1", port: upstreamPort)
                    .flatMapThrowing { server in
                        try device.pipeline.syncOperations.addHandler(Relay(to: server, after: oneWay))
                        try server.pipeline.syncOperations.addHandler(Relay(to: device, after: oneWay))
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = listener.localAddress?.port ?? 0
    }

    /// Stops listening and closes every relayed connection.
    public func close() async {
        try? await listener.close()
        try? await group.shutdownGracefully()
    }

    /// Forwards what one side reads to the other, late.
    final class Relay: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let partner: any Channel
        let delay: TimeAmount

        init(to partner: any Channel, after delay: TimeAmount) {
            self.partner = partner
            self.delay = delay
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            let partner = self.partner
            context.eventLoop.scheduleTask(in: delay) { partner.writeAndFlush(bytes, promise: nil) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            let partner = self.partner
            context.eventLoop.scheduleTask(in: delay) { partner.close(promise: nil) }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
