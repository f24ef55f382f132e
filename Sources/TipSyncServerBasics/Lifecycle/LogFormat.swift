package import Logging

/// How the server writes log records to standard error (`--log-format`).
package enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's `StreamLogHandler` line: `2026-11-28T03:05:05+0000 info tipsync-server: … [module] message`.
    case text
    /// One JSON object per line (``JSONLogHandler``), for log collectors.
    case json

    /// A handler for `label` that drops records below `level`.
    package func handler(label: String, level: Logger.Level) -> any LogHandler {
        switch self {
        case .text:
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        case .json:
            var handler = JSONLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
