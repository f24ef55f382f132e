import Logging
import NIOCore
import NIOPosix
package import PostgresNIO
import TipSyncServerBasics
import TipSyncStorage

#if canImport(Glibc)
    import Glibc
#endif

/// Waiting for PostgreSQL at start (issue 53, item 2: an unreachable database made the server sit
/// silently, no port bound, no error). Each attempt is one `SELECT 1`, given at most 5 s; between
/// attempts a warning says what the server waits for and when it tries again (1, 2, 4, 8, then every
/// 15 s); after `--database-wait` it gives up with an error naming the database's host and port.
package enum PostgresReachability {
    package struct Unreachable: Error, CustomStringConvertible {
        package var description: String
    }

    private struct AttemptTimedOut: Error, CustomStringConvertible {
        package var description: String { "no answer within 5 s" }
    }

    package static func waitUntilReachable(
        _ client: PostgresClient, host: String, port: Int, within limit: Duration, logger: Logger,
        clock: ContinuousClock = ContinuousClock()
    ) async throws {
        let address = "\(host):\(port)"
        let deadline = clock.now + limit
        var delay = Duration.seconds(1)
        var attempt = 1
        while true {
            let lastError: any Error
            do {
                let bound = min(.seconds(5), max(.milliseconds(100), deadline - clock.now))
                // A connection first, whose failure says why (the pool only retries, silently).
                try await connect(host: host, port: port, within: bound)
                try await answer(client, within: bound)
                if attempt > 1 { logger.info("PostgreSQL answers", metadata: ["database": "\(address)"]) }
                return
            } catch {
                lastError = error
            }
            let remaining = deadline - clock.now
            guard remaining > .zero else {
                throw Unreachable(
                    description: "cannot reach PostgreSQL at \(address) after \(Self.seconds(limit)) "
                        + "(\(attempt) attempts; last: \(Self.reason(lastError))); check that it runs and that "
                        + "--database or TIPSYNC_DATABASE names it, or wait longer with --database-wait")
            }
            let wait = min(delay, remaining)
            logger.warning(
                "waiting for PostgreSQL",
                metadata: [
                    "database": "\(address)", "attempt": "\(attempt)", "error": "\(Self.reason(lastError))",
                    "retryIn": "\(Self.seconds(wait))",
                ])
            try await Task.sleep(for: wait, clock: clock)
            delay = min(delay * 2, .seconds(15))
            attempt += 1
        }
    }

    /// A TCP connection to the database's address, closed at once.
    private static func connect(host: String, port: Int, within limit: Duration) async throws {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.nanoseconds(limit.wholeNanoseconds))
            .connect(host: host, port: port).get()
        try? await channel.close()
    }

    /// One `SELECT 1`, or an error once `limit` has passed.
    private static func answer(_ client: PostgresClient, within limit: Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await client.query("SELECT 1") }
            group.addTask {
                try await Task.sleep(for: limit)
                throw AttemptTimedOut()
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        "\(duration.components.seconds + (duration.components.attoseconds > 0 ? 1 : 0)) s"
    }

    /// An error in a few words: PostgresNIO's descriptions of a refused connection are long.
    private static func reason(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let io = error.connectionErrors.first?.error as? IOError {
                return String(cString: strerror(io.errnoCode)).lowercased()
            }
            if error.dnsAAAAError != nil || error.dnsAError != nil { return "the host name does not resolve" }
            return "cannot connect"
        }
        if error is ChannelError { return "no connection within 5 s" }
        if let error = error as? PSQLError {
            return "\(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
        }
        return "\(error)"
    }
}
