import Foundation

/// A failure the agent reports as one line: on stderr from the CLI, as a JSON error from the
/// local API. `code` is stable (for programs); `message` says what to do (for people).
public struct AgentError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Every code the agent reports: the CLI's and the local API's one list (README, "Local API").
    public enum Code: String, Sendable, CaseIterable {
        /// another agent already serves this store
        case alreadyRunning = "already-running"
        /// a catalog file is not a valid catalog
        case badCatalog = "bad-catalog"
        /// a value or a local API request line is not JSON
        case badJson = "bad-json"
        /// a command-line option is malformed
        case badOption = "bad-option"
        /// JSON that is not a valid request or argument
        case badRequest = "bad-request"
        /// the store's configuration file is damaged
        case badStore = "bad-store"
        /// the local API connection closed
        case closed = "closed"
        /// the store belongs to another device
        case deviceMismatch = "device-mismatch"
        /// storage or anything else failed (the message says what)
        case failed = "failed"
        /// a file named on the command line cannot be read
        case noFile = "no-file"
        /// no store here: run `init` first
        case noStore = "no-store"
        /// this agent does not sync
        case noSync = "no-sync"
        /// a catalog tip for other platforms only
        case notForThisPlatform = "not-for-this-platform"
        /// no agent listens on the store's socket
        case notRunning = "not-running"
        /// the local socket could not be made
        case socket = "socket"
        /// the server refused a sync round
        case syncFailed = "sync-failed"
        /// `watch --timeout` ran out
        case timeout = "timeout"
        /// the server refused the device's token (`init`)
        case tokenRefused = "token-refused"
        /// a transient parameter set outside a running agent
        case transientParameter = "transient-parameter"
        /// an event the catalog does not declare
        case unknownEvent = "unknown-event"
        /// a parameter the catalog does not declare
        case unknownParameter = "unknown-parameter"
        /// a tip the catalog does not declare
        case unknownTip = "unknown-tip"
        /// the server cannot be reached
        case unreachable = "unreachable"
        /// a file could not be written
        case writeFailed = "write-failed"
        /// a parameter value of another JSON type than its default
        case wrongType = "wrong-type"
    }

    /// One of ``Code``'s raw values (a string, so a newer agent's codes still decode).
    public let code: String
    public let message: String

    public init(_ code: Code, message: String) {
        self.code = code.rawValue
        self.message = message
    }

    public var description: String { message }

    static func noStore(_ path: String) -> AgentError {
        AgentError(
            .noStore,
            message:
                "no agent store at \(path); run `tipsync-agent init --server URL --token TOKEN --device NAME` first")
    }

    /// A tip the catalog has for other platforms only (protocol.md §13.11).
    static func notForThisPlatform(_ id: String, platforms: [String], device: String?) -> AgentError {
        AgentError(
            .notForThisPlatform,
            message:
                "\(id): not for this platform (\(platforms.joined(separator: ", ")); this device: \(device ?? "unknown"))"
        )
    }

    static func unknownTip(_ id: String, known: [String]) -> AgentError {
        let list = known.isEmpty ? "no catalog is loaded" : "the catalog has: " + known.joined(separator: ", ")
        return AgentError(.unknownTip, message: "unknown tip '\(id)' (\(list))")
    }

    static func unknownParameter(_ name: String, known: [String]) -> AgentError {
        let list = known.isEmpty ? "no catalog is loaded" : "the catalog has: " + known.joined(separator: ", ")
        return AgentError(.unknownParameter, message: "unknown parameter '\(name)' (\(list))")
    }

    static func unknownEvent(_ id: String, known: [String]) -> AgentError {
        let list = known.isEmpty ? "no catalog is loaded" : "the catalog has: " + known.joined(separator: ", ")
        return AgentError(.unknownEvent, message: "unknown event '\(id)' (\(list))")
    }

    static func badJSON(_ text: String, _ what: String) -> AgentError {
        AgentError(.badJson, message: "\(what) is not valid JSON: \(text.prefix(80))")
    }

    static func badRequest(_ message: String) -> AgentError {
        AgentError(.badRequest, message: message)
    }

    /// Wraps anything else (storage, sync) as one line.
    static func wrap(_ error: any Error, _ context: String) -> AgentError {
        if let error = error as? AgentError { return error }
        let text = String(describing: error).replacingOccurrences(of: "\n", with: " ")
        return AgentError(.failed, message: "\(context): \(text)")
    }
}
