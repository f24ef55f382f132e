package import CoreMetrics
package import Prometheus

/// Makes the server's metrics in its Prometheus registry, each TipSync metric with its `# HELP`
/// line (``help``); other metrics (the request metrics, any library's) as the plain Prometheus factory does.
package struct DocumentedMetricsFactory: MetricsFactory {
    package let registry: PrometheusCollectorRegistry
    package let plain: PrometheusMetricsFactory

    package init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        plain = PrometheusMetricsFactory(registry: registry)
    }

    /// Every TipSync metric and what it counts: the help text `/metrics` prints (one place for both).
    package static let help: [String: String] = [
        "tipsync_changes_accepted_total": "Changes stored from pushes.",
        "tipsync_push_duplicates_total": "Changes in pushes the server already held (retried pushes), ignored.",
        "tipsync_changes_served_total": "Changes sent to devices in pull pages.",
        "tipsync_kept_state_pages_served_total":
            "Pull pages answered with a compacted account's state as kept compressed, not read from the log again.",
        "tipsync_live_connections": "Live (server-sent events) streams open on this instance.",
        "tipsync_live_streams_opened_total":
            "Live streams opened, by where they are served: pipeline (the connection's first request; no task "
            + "while idle) or connection_task (asked for after other requests on the connection; more memory).",
        "tipsync_pushes_total":
            "Pushes stored and answered.",
        "tipsync_long_polls": "Long-poll pulls waiting for news on this instance.",
        "tipsync_requests_waiting":
            "Requests waiting for their turn to be served, beyond --requests-in-flight served at once.",
        "tipsync_build_info": "1, labelled with the server's release and the protocol revision it implements.",
        "tipsync_allocator_info":
            "1, labelled with the allocator serving malloc (mimalloc and its version where the server links it, glibc).",
        "tipsync_live_streams_stalled_total":
            "Live streams ended because their client had not read what was written within --live-stall-timeout.",
        "tipsync_rate_limited_total": "Requests and pushes refused with 429 rate_limited.",
        "tipsync_auto_compactions_total": "Background compactions run.",
        "tipsync_compacted_entries_total": "Log entries dropped by background compactions.",
        "tipsync_connections": "Open HTTP connections on this instance.",
        "tipsync_connection_limit_reached_total":
            "Connections closed at once because the connection limit was reached.",
        "tipsync_open_files": "File descriptors the process has open.",
        "tipsync_open_files_limit": "The process's open-file limit (soft).",
        "tipsync_open_files_exhausted_total":
            "Times a connection could not be accepted because no file descriptor was left.",
        "tipsync_connection_timeouts_total":
            "Connections closed for sending a request head or body too slowly, by phase.",
        "tipsync_connection_peer_closed_total": "Connections the client closed before its request was answered.",
        "tipsync_requests_refused_total": "Requests refused before routing, by reason.",
        "tipsync_memory_releases_total": "Times the server handed memory back after a burst.",
        "tipsync_failed_sign_ins_total": "Sign-ins refused (bad device tokens, admin keys, console logins), by kind.",
        "process_cpu_seconds_total": "User and system CPU time the server process has used, in seconds.",
        "process_resident_memory_bytes": "The server process's resident memory, in bytes.",
        "process_virtual_memory_bytes": "The server process's virtual memory, in bytes.",
        "process_start_time_seconds": "When the server process started, in seconds since 1970.",
    ]

    package static func descriptor(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    package func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        guard let help = Self.help[label] else { return plain.makeCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(descriptor: Self.descriptor(label, help), labels: dimensions)
    }

    package func makeFloatingPointCounter(label: String, dimensions: [(String, String)])
        -> any FloatingPointCounterHandler
    {
        guard let help = Self.help[label] else {
            return plain.makeFloatingPointCounter(label: label, dimensions: dimensions)
        }
        return registry.makeCounter(descriptor: Self.descriptor(label, help), labels: dimensions)
    }

    package func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard let help = Self.help[label], !aggregate else {
            return plain.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
        }
        return registry.makeGauge(descriptor: Self.descriptor(label, help), labels: dimensions)
    }

    package func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        guard let help = Self.help[label] else { return plain.makeMeter(label: label, dimensions: dimensions) }
        return registry.makeGauge(descriptor: Self.descriptor(label, help), labels: dimensions)
    }

    package func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        plain.makeTimer(label: label, dimensions: dimensions)
    }

    package func destroyCounter(_ handler: any CounterHandler) { plain.destroyCounter(handler) }
    package func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        plain.destroyFloatingPointCounter(handler)
    }
    package func destroyRecorder(_ handler: any RecorderHandler) { plain.destroyRecorder(handler) }
    package func destroyMeter(_ handler: any MeterHandler) { plain.destroyMeter(handler) }
    package func destroyTimer(_ handler: any TimerHandler) { plain.destroyTimer(handler) }
}
