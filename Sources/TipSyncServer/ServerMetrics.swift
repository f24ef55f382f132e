import Metrics

/// The server's own metrics (exported at `/metrics` with Hummingbird's request metrics).
struct ServerMetrics: Sendable {
    let changesAccepted = Counter(label: "tipsync_changes_accepted_total")
    let duplicatesIgnored = Counter(label: "tipsync_push_duplicates_total")
    let changesServed = Counter(label: "tipsync_changes_served_total")
    let liveConnections = Meter(label: "tipsync_live_connections")
}
