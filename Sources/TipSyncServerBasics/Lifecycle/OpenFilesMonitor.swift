package import Logging
package import Metrics
import ServiceLifecycle
import Synchronization

/// Watches how many descriptors the server holds against its limit: `tipsync_open_files` and
/// `tipsync_open_files_limit` at `/metrics`, and a warning in the log (once per episode, and
/// `tipsync_open_files_exhausted_total`) when use passes 90% of the limit. The warning says what
/// happens next: connections past the server's maximum (`maxConnections`, below the limit so the
/// database and logs keep their descriptors) wait in the kernel's backlog; nothing fails yet.
package struct OpenFilesMonitor: Service {
    package let interval: Duration
    package let logger: Logger
    package let open: Gauge
    package let limit: Gauge
    package let exhausted: Counter
    /// The connections the server holds at most (``ConnectionCounter``).
    package let maxConnections: Int

    package init(interval: Duration, maxConnections: Int, logger: Logger, factory: any MetricsFactory) {
        self.interval = interval
        self.maxConnections = maxConnections
        self.logger = logger
        open = Gauge(label: "tipsync_open_files", factory: factory)
        limit = Gauge(label: "tipsync_open_files_limit", factory: factory)
        exhausted = Counter(label: "tipsync_open_files_exhausted_total", factory: factory)
    }

    package func run() async throws {
        let warned = Mutex(false)  // whether this episode was warned of
        await Periodic.run(every: interval, immediately: true) {
            let soft = FileDescriptorLimit.current().soft
            guard let count = FileDescriptorLimit.openCount() else { return }
            open.record(count)
            limit.record(Int64(clamping: soft))
            let nearlyExhausted = soft > 0 && UInt64(count) * 10 >= soft * 9
            let wasWarned = warned.withLock { was in
                defer { was = nearlyExhausted }
                return was
            }
            if nearlyExhausted, !wasWarned {
                exhausted.increment()
                logger.warning(
                    "open files above 90% of the limit: past max-connections new connections wait in the backlog",
                    metadata: ["open": "\(count)", "limit": "\(soft)", "maxConnections": "\(maxConnections)"])
            } else if !nearlyExhausted, wasWarned {
                logger.notice("open files back below 90% of the limit", metadata: ["open": "\(count)"])
            }
        }
    }
}
