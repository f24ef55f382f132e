import Foundation
public import TipSync
import TipSyncCore

/// Answers local API requests: one JSON line in, one JSON line out (`watch`: a stream of lines).
/// The transport-free half of the local API, shared by the socket server and tests.
public struct LocalAPIHandler: Sendable {
    public let agent: Agent
    /// Runs one sync round for `{"op":"sync"}` (the daemon's client); `nil`: sync is unavailable.
    let sync: (@Sendable () async throws -> Void)?
    /// The daemon's sync status for `{"op":"sync-status"}`; `nil`: this agent does not sync.
    let syncStatus: (@Sendable () async -> SyncStatus)?

    public init(
        agent: Agent, sync: (@Sendable () async throws -> Void)? = nil,
        syncStatus: (@Sendable () async -> SyncStatus)? = nil
    ) {
        self.agent = agent
        self.sync = sync
        self.syncStatus = syncStatus
    }

    /// Decodes a request line; a clear error for anything malformed: `bad-json` for a line that is
    /// not JSON, `bad-request` for JSON that is not a request.
    public static func decode(_ line: some Collection<UInt8>) throws -> LocalAPIRequest {
        let json: JSONValue
        do {
            json = try JSONParser.parse(line)
        } catch {
            throw AgentError(.badJson, message: "the request is not valid JSON: \(error)")
        }
        do {
            return try JSONValueDecoder().decode(LocalAPIRequest.self, from: json)
        } catch let error as AgentError {
            throw error
        } catch let error as DecodingError {
            let path = error.fieldPath
            throw AgentError(
                .badRequest,
                message: "not a valid request: " + (path.isEmpty ? error.reason : "\(path): \(error.reason)"))
        } catch {
            throw AgentError(.badRequest, message: "not a valid request: \(error)")
        }
    }

    /// The response line (without the newline) to a non-`watch` request.
    public func respond(to request: LocalAPIRequest) async -> String {
        do {
            // Another process (a CLI call) may have written to the store or replaced the catalog.
            try agent.replica.reloadIfChangedElsewhere()
            try agent.reloadCatalogIfChanged()
            switch request.op {
            case .status:
                return #"{"ok":true,"tips":["#
                    + (try agent.status(tip: request.tip)).tips.map(\.jsonLine)
                    .joined(separator: ",") + "]}"
            case .explain:
                return #"{"ok":true,"tips":["#
                    + (try agent.explanations(tip: request.tip)).map(\.json.canonicalText).joined(separator: ",") + "]}"
            case .donate:
                try agent.donate(event: try request.require(request.event, "event"), value: request.value)
            case .display:
                try agent.display(tip: try request.require(request.tip, "tip"), duration: request.duration ?? 0)
            case .invalidate:
                try agent.invalidate(tip: try request.require(request.tip, "tip"), reason: request.reason ?? .tipClosed)
            case .resetEligibility:
                try agent.resetEligibility(tip: try request.require(request.tip, "tip"))
            case .parameterGet:
                let value = try agent.parameter(try request.require(request.name, "name"))
                return #"{"ok":true,"value":\#(value.canonicalText)}"#
            case .parameterSet:
                guard let value = request.value else { throw AgentError.badRequest("op 'param-set' needs \"value\"") }
                try agent.setParameter(try request.require(request.name, "name"), to: value, inMemory: true)
            case .sync:
                guard let sync else { throw AgentError(.noSync, message: "this agent does not sync") }
                do { try await sync() } catch { throw AgentError.wrap(error, "sync failed") }
            case .syncStatus:
                guard let syncStatus else { throw AgentError(.noSync, message: "this agent does not sync") }
                return #"{"ok":true,"sync":\#(await syncStatus().json.canonicalText)}"#
            case .reload:
                break  // done above: what another process wrote is merged, and a local change wakes the push
            case .watch:
                throw AgentError.badRequest("watch streams; it is served by the socket, not as one response")
            }
            return #"{"ok":true}"#
        } catch {
            return Self.errorLine(error)
        }
    }

    /// `{"ok":false,"error":{"code":…,"message":…}}`.
    public static func errorLine(_ error: any Error) -> String {
        let agentError = AgentError.wrap(error, "request failed")
        return
            #"{"ok":false,"error":{"code":\#(JSONValue.string(agentError.code).canonicalText),"message":\#(JSONValue.string(agentError.message).canonicalText)}}"#
    }
}
