package import Logging
import UnixSignals

/// The lines an operator sees when the server is told to stop: at `info`, the signal that started
/// the graceful shutdown (swift-service-lifecycle says it at `debug` only), then that it stopped.
package enum ShutdownAnnouncement {
    /// Runs `serve` (which stops at SIGTERM or SIGINT), announcing the signal when it arrives and
    /// the stop once `serve` returns.
    package static func announcing(logger: Logger, _ serve: () async throws -> Void) async throws {
        let watcher = Task {
            for await signal in await UnixSignalsSequence(trapping: .sigterm, .sigint) {
                logger.info(
                    "\(signal) received: shutting down; no new connections, open requests finish, live streams close")
                return
            }
        }
        defer { watcher.cancel() }
        try await serve()
        logger.info("stopped")
    }
}
