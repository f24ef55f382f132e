import Foundation
public import Logging
import NIOCore
import NIOPosix
public import ServiceLifecycle
import TipSync

/// The local API on a Unix domain socket (owner-only, `agent.sock` in the store): newline-delimited
/// JSON requests, one response line each; `watch` streams report lines until the client hangs up.
/// Runs until graceful shutdown, then removes its socket file.
public struct LocalAPIServer: Service {
    public let handler: LocalAPIHandler
    public let path: String
    let logger: Logger
    /// Longest request line accepted.
    static let maximumRequestBytes = 1 << 20

    public init(handler: LocalAPIHandler, path: String, logger: Logger) {
        self.handler = handler
        self.path = path
        self.logger = logger
    }

    public func run() async throws {
        if LocalAPIClient.isListening(path) {
            throw AgentError(
                .alreadyRunning, message: "an agent is already running on this store (socket \(path))")
        }
        let maximum = Self.maximumRequestBytes
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maximumLength: maximum)))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        chmod(path, 0o600)
        logger.info("local API listening", metadata: ["socket": "\(path)"])
        defer { unlink(path) }
        try await untilGracefulShutdown {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        }
    }

    func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { watches in
                    for try await line in inbound {
                        let reply: String
                        do {
                            let request = try LocalAPIHandler.decode(line.readableBytesView)
                            if request.op == .watch {
                                try handler.agent.replica.reloadIfChangedElsewhere()
                                try handler.agent.reloadCatalogIfChanged()
                                let reports = try handler.agent.watch(tip: request.tip)
                                watches.addTask {
                                    for await report in reports {
                                        try await outbound.write(ByteBuffer(string: report.jsonLine + "\n"))
                                    }
                                }
                                continue
                            }
                            reply = await handler.respond(to: request)
                        } catch {
                            reply = LocalAPIHandler.errorLine(error)
                        }
                        try await outbound.write(ByteBuffer(string: reply + "\n"))
                    }
                    // The client hung up: stop its watches.
                    watches.cancelAll()
                }
            }
        } catch {
            logger.debug("local API connection ended", metadata: ["error": "\(error)"])
        }
    }
}
