package import Metrics

/// What the connection layer counts, exported at `/metrics`: connections closed for a late request
/// head or body, closed because the peer left, refused for a declared body above the limit or for
/// bytes the HTTP parser cannot read.
package struct ConnectionMetrics: Sendable {
    let headTimeouts: Counter
    let bodyTimeouts: Counter
    let peerClosed: Counter
    let declaredTooLarge: Counter
    let malformed: Counter

    package init(factory: any MetricsFactory) {
        headTimeouts = Counter(
            label: "tipsync_connection_timeouts_total", dimensions: [("phase", "head")], factory: factory)
        bodyTimeouts = Counter(
            label: "tipsync_connection_timeouts_total", dimensions: [("phase", "body")], factory: factory)
        peerClosed = Counter(label: "tipsync_connection_peer_closed_total", factory: factory)
        declaredTooLarge = Counter(
            label: "tipsync_requests_refused_total", dimensions: [("reason", "body_too_large")], factory: factory)
        malformed = Counter(
            label: "tipsync_requests_refused_total", dimensions: [("reason", "malformed_request")], factory: factory)
    }
}
