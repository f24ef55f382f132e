/// A failure the agent reports as one line: on stderr from the CLI, as a JSON error from the
/// local API. `code` is stable (for programs); `message` says what to do (for people).
public struct AgentError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public let code: String
    public let message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    static func noStore(_ path: String) -> AgentError {
        AgentError(
            code: "no-store",
            message:
                "no agent store at \(path); run `tipsync-agent init --server URL --token TOKEN --device NAME` first")
    }

    static func unknownTip(_ id: String, known: [String]) -> AgentError {
        let list = known.isEmpty ? "no catalog is loaded" : "the catalog has: " + known.joined(separator: ", ")
        return AgentError(code: "unknown-tip", message: "unknown tip '\(id)' (\(list))")
    }

    static func unknownParameter(_ name: String, known: [String]) -> AgentError {
        let list = known.isEmpty ? "no catalog is loaded" : "the catalog has: " + known.joined(separator: ", ")
        return AgentError(code: "unknown-parameter", message: "unknown parameter '\(name)' (\(list))")
    }

    static func badJSON(_ text: String, _ what: String) -> AgentError {
        AgentError(code: "bad-json", message: "\(what) is not valid JSON: \(text.prefix(80))")
    }

    static func badRequest(_ message: String) -> AgentError {
        AgentError(code: "bad-request", message: message)
    }

    /// Wraps anything else (storage, sync) as one line.
    static func wrap(_ error: any Error, _ context: String) -> AgentError {
        if let error = error as? AgentError { return error }
        let text = String(describing: error).replacingOccurrences(of: "\n", with: " ")
        return AgentError(code: "failed", message: "\(context): \(text)")
    }
}
