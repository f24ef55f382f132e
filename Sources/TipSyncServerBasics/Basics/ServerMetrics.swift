package import CoreMetrics
package import Prometheus
import TipSyncCore
package import TipSyncNetworking

/// The server's own metrics, exported at `/metrics` with the request metrics
/// (``RequestMetricsMiddleware``). Made from the registry `buildApplication` is given, so each
/// application (and each test) counts its own.
package struct ServerMetrics: Sendable {
    package let changesAccepted: CoreMetrics.Counter
    package let duplicatesIgnored: CoreMetrics.Counter
    package let changesServed: CoreMetrics.Counter
    /// Pull pages answered with a compacted account's state as kept compressed (``KeptStatePage``).
    package let keptStatePagesServed: CoreMetrics.Counter
    /// Open live (SSE) streams on this instance.
    package let liveConnections: CoreMetrics.Meter
    /// Live streams opened on their connection's pipeline, and on Hummingbird's connection task.
    package let liveStreamsOnPipeline: CoreMetrics.Counter
    package let liveStreamsOnConnectionTask: CoreMetrics.Counter
    /// Pushes stored and answered.
    package let pushes: CoreMetrics.Counter
    /// Live streams ended because their client did not read (``LiveStream/StallBound``).
    package let liveStreamsStalled: CoreMetrics.Counter
    /// Long-poll pulls waiting on this instance.
    package let longPolls: CoreMetrics.Meter
    /// Requests waiting for their turn to be served (``ServerConfiguration/requestsInFlight``).
    package let requestsWaiting: CoreMetrics.Meter
    package let connections: ConnectionMetrics
    /// Requests and pushes refused with 429 `rate_limited`.
    package let rateLimited: CoreMetrics.Counter
    /// Background compactions run, and the log entries they dropped.
    package let autoCompactions: CoreMetrics.Counter
    package let compactedEntries: CoreMetrics.Counter
    /// 1, labelled with the release and protocol revision (``TipSyncVersion``).
    package let buildInfo: CoreMetrics.Gauge
    /// The process's CPU time and memory, recorded at each scrape.
    package let process: ProcessUsage.Gauges
    package let factory: any MetricsFactory

    package init(registry: PrometheusCollectorRegistry?) {
        let factory: any MetricsFactory =
            registry.map { DocumentedMetricsFactory(registry: $0) } ?? MetricsSystem.factory
        self.factory = factory
        changesAccepted = CoreMetrics.Counter(label: "tipsync_changes_accepted_total", factory: factory)
        duplicatesIgnored = CoreMetrics.Counter(label: "tipsync_push_duplicates_total", factory: factory)
        changesServed = CoreMetrics.Counter(label: "tipsync_changes_served_total", factory: factory)
        keptStatePagesServed = CoreMetrics.Counter(label: "tipsync_kept_state_pages_served_total", factory: factory)
        liveConnections = CoreMetrics.Meter(label: "tipsync_live_connections", factory: factory)
        liveStreamsOnPipeline = CoreMetrics.Counter(
            label: "tipsync_live_streams_opened_total", dimensions: [("path", "pipeline")], factory: factory)
        liveStreamsOnConnectionTask = CoreMetrics.Counter(
            label: "tipsync_live_streams_opened_total", dimensions: [("path", "connection_task")], factory: factory)
        pushes = CoreMetrics.Counter(label: "tipsync_pushes_total", factory: factory)
        longPolls = CoreMetrics.Meter(label: "tipsync_long_polls", factory: factory)
        requestsWaiting = CoreMetrics.Meter(label: "tipsync_requests_waiting", factory: factory)
        liveStreamsStalled = CoreMetrics.Counter(label: "tipsync_live_streams_stalled_total", factory: factory)
        connections = ConnectionMetrics(factory: factory)
        rateLimited = CoreMetrics.Counter(label: "tipsync_rate_limited_total", factory: factory)
        autoCompactions = CoreMetrics.Counter(label: "tipsync_auto_compactions_total", factory: factory)
        compactedEntries = CoreMetrics.Counter(label: "tipsync_compacted_entries_total", factory: factory)
        buildInfo = CoreMetrics.Gauge(
            label: "tipsync_build_info",
            dimensions: [("version", TipSyncVersion.release), ("protocol", TipSyncVersion.protocolRevision)],
            factory: factory)
        buildInfo.record(1)
        process = ProcessUsage.Gauges(factory: factory)
    }
}
