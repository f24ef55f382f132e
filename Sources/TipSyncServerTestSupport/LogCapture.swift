package import Logging
import Synchronization

/// Collects every log line, message and metadata alike.
package final class LogCapture: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .trace

    package init() {}

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.withLock { $0.append("\(event.level) \(event.message) \(all)") }
    }

    package var text: String { lines.withLock { $0.joined(separator: "\n") } }
}
