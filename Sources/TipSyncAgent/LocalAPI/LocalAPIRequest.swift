public import TipSyncCore

/// One request to the local API: a JSON object on one line (see README, "Local API").
///
/// `{"op":"status"}` · `{"op":"status","tip":"favorite"}` · `{"op":"donate","event":"opened","value":{"yardID":7}}` ·
/// `{"op":"display","tip":"favorite","duration":3}` · `{"op":"invalidate","tip":"favorite","reason":"tipClosed"}` ·
/// `{"op":"reset-eligibility","tip":"favorite"}` · `{"op":"param-get","name":"plan"}` ·
/// `{"op":"param-set","name":"plan","value":"pro"}` · `{"op":"watch"}` · `{"op":"sync"}` ·
/// `{"op":"reload"}` (another process wrote to the store: pick it up and push it now) ·
/// `{"op":"sync-status"}` · `{"op":"explain"}` · `{"op":"explain","tip":"favorite"}`
public struct LocalAPIRequest: Sendable, Hashable, Decodable {
    public enum Operation: String, Sendable, Hashable, Decodable, CaseIterable {
        case status, donate, display, invalidate, watch, sync, reload
        case resetEligibility = "reset-eligibility"
        case parameterGet = "param-get"
        case parameterSet = "param-set"
        /// The daemon's sync status (protocol.md §17.4).
        case syncStatus = "sync-status"
        /// Why each tip (or one) has its status (protocol.md §13.9).
        case explain
    }

    public var op: Operation
    public var tip: String?
    public var event: String?
    public var name: String?
    /// A donation's info or a parameter's value; `.null` when the request says `"value":null`.
    public var value: JSONValue?
    public var duration: Double?
    public var reason: InvalidationReason?

    private enum CodingKeys: String, CodingKey { case op, tip, event, name, value, duration, reason }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let opText = try container.decode(String.self, forKey: .op)
        guard let op = Operation(rawValue: opText) else {
            throw AgentError.badRequest(
                "unknown op '\(opText)'; one of: " + Operation.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.op = op
        tip = try container.decodeIfPresent(String.self, forKey: .tip)
        event = try container.decodeIfPresent(String.self, forKey: .event)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        if container.contains(.value) {
            value =
                try container.decodeNil(forKey: .value) ? .null : try container.decode(JSONValue.self, forKey: .value)
        }
        duration = try container.decodeIfPresent(Double.self, forKey: .duration)
        if let text = try container.decodeIfPresent(String.self, forKey: .reason) {
            guard let reason = InvalidationReason(rawValue: text), [.tipClosed, .actionPerformed].contains(reason)
            else {
                throw AgentError.badRequest("reason must be tipClosed or actionPerformed, got '\(text)'")
            }
            self.reason = reason
        }
    }

    func require(_ field: String?, _ name: String) throws -> String {
        guard let field else { throw AgentError.badRequest("op '\(op.rawValue)' needs \"\(name)\"") }
        return field
    }
}
