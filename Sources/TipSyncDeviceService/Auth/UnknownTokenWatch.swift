package import Logging
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// Says plainly when devices present device tokens this database does not hold — the sign of a
/// server started on the wrong database (issue 72: an empty `./tipsync-data/server.sqlite` created
/// in another folder refused every device for as long as it ran). One `warning` for the first such
/// request, then at most one a minute with how many came meanwhile; the refusals themselves are
/// logged at `info` by ``SignInThrottle``.
package final class UnknownTokenWatch: Sendable {
    let logger: Logger
    /// Milliseconds between two warnings.
    let interval: Int64
    private let state = Mutex<(count: Int, lastWarning: Int64?)>((0, nil))

    package init(logger: Logger, interval: Int64 = 60_000) {
        self.logger = logger
        self.interval = interval
    }

    /// Counts one request whose device token this database does not hold, at `now` (milliseconds).
    package func note(now: Int64) {
        let report: Int? = state.withLock { state in
            state.count += 1
            if let last = state.lastWarning, now - last < interval { return nil }
            defer { state = (0, now) }
            return state.count
        }
        guard let report else { return }
        logger.warning(
            "\(report) request(s) since the last warning presented device tokens this database never issued or has revoked; if devices that synced before are refused, is this server on the right database? (its path or URL is the 'database' line logged at start)"
        )
    }
}
