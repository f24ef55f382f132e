package import Foundation
package import Logging
import Synchronization
import TipSyncCore

/// A swift-log handler writing one JSON object per line to standard error, for log collectors
/// (`--log-format json`):
///
///     {"label":"tipsync-server","level":"info","message":"request","metadata":{"method":"GET","status":"200"},"source":"TipSyncServer","time":"2026-11-28T03:05:05.123Z"}
///
/// Members in canonical order (protocol.md §1: sorted, escaped the one way). Metadata values are
/// strings (a list or a dictionary value is written as its description); `source` is the module
/// that logged. Lines are written whole, one `write` each, so records
/// from several threads never interleave.
package struct JSONLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    package var metadataProvider: Logger.MetadataProvider?
    package let label: String
    package let write: @Sendable (String) -> Void

    /// - Parameter write: where each line goes (default: standard error).
    package init(label: String, write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.write = write
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var fields: [(String, JSONValue)] = [
            ("time", .string(Self.timestamp(Date()))), ("level", .string(event.level.rawValue)),
            ("label", .string(label)), ("message", .string(event.message.description)),
            ("source", .string(event.source)),
        ]
        if !merged.isEmpty {
            let members = merged.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value.description)) }
            fields.append(("metadata", .object(Dictionary(members) { first, _ in first })))
        }
        write(JSONValue.object(Dictionary(fields) { first, _ in first }).canonicalText + "\n")
    }

    package static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
    }

    /// Writes a line to standard error in one `write`.
    package static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data(line.utf8))
    }
}
