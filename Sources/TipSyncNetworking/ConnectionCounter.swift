import HummingbirdCore
package import Logging
package import Metrics
import Synchronization

/// Counts open connections (`tipsync_connections`) and stops accepting new ones at a maximum, so
/// that connections alone can never use every descriptor the database and logs need; past it new
/// connections wait in the kernel's backlog, and the first time it is reached the log says so and
/// `tipsync_connection_limit_reached_total` counts it. At the maximum, the oldest connection that
/// has not sent a request yet is closed (``IdleConnections``), so idle sockets cannot hold the
/// backlog shut.
package struct ConnectionCounter: AvailableConnectionsDelegate {
    final class State: Sendable {
        let count = Atomic<Int>(0)
        let atLimit = Atomic<Bool>(false)
    }

    let maximum: Int
    let idle: IdleConnections
    let logger: Logger
    let state = State()
    let gauge: Gauge
    let limitReached: Counter

    package init(maximum: Int, idle: IdleConnections, logger: Logger, factory: any MetricsFactory) {
        self.maximum = maximum
        self.idle = idle
        self.logger = logger
        gauge = Gauge(label: "tipsync_connections", factory: factory)
        limitReached = Counter(label: "tipsync_connection_limit_reached_total", factory: factory)
    }

    package mutating func connectionOpened() {
        let count = state.count.add(1, ordering: .relaxed).newValue
        gauge.record(count)
        if count >= maximum { idle.evictOldest(count - maximum + 1) }
        if count >= maximum, !state.atLimit.exchange(true, ordering: .relaxed) {
            limitReached.increment()
            logger.warning(
                "connection limit reached: new connections wait until others close",
                metadata: ["connections": "\(count)", "maximum": "\(maximum)"])
        }
    }

    package mutating func connectionClosed() {
        let count = state.count.subtract(1, ordering: .relaxed).newValue
        gauge.record(count)
        if count < maximum { state.atLimit.store(false, ordering: .relaxed) }
    }

    package func isAcceptingNewConnections() -> Bool {
        state.count.load(ordering: .relaxed) < maximum
    }
}
