import Foundation
import TipSync

/// Between the devices and the server: delivers requests, or loses, duplicates or cuts them as the
/// history's faults say. Deterministic: faults apply to the next request of the device named.
actor SimulatedNetwork {
    enum Fault { case dropRequest, dropResponse, duplicate }

    let server: SimulatedServer
    var partitioned: Set<String> = []
    var armed: [String: [Fault]] = [:]
    var crashServerOnNextRequest = false
    /// Requests the server handled (for reports).
    private(set) var delivered = 0

    init(server: SimulatedServer) {
        self.server = server
    }

    func arm(_ fault: Fault, for device: String) {
        armed[device, default: []].append(fault)
    }

    func setPartitioned(_ device: String, _ isPartitioned: Bool) {
        if isPartitioned { partitioned.insert(device) } else { partitioned.remove(device) }
    }

    func armServerCrash() {
        crashServerOnNextRequest = true
    }

    /// Heals everything and disarms pending faults (before the final sync).
    func calm() {
        partitioned = []
        armed = [:]
        crashServerOnNextRequest = false
    }

    func send(_ request: SyncHTTPRequest, from device: String) async throws -> SyncHTTPResponse {
        if partitioned.contains(device) { throw SyncClientError.unreachable("partitioned") }
        let fault = armed[device]?.isEmpty == false ? armed[device]!.removeFirst() : nil
        if fault == .dropRequest { throw SyncClientError.unreachable("request lost") }
        delivered += 1
        let response = await server.handle(request)
        if crashServerOnNextRequest {
            crashServerOnNextRequest = false
            try await server.restart()
            throw SyncClientError.unreachable("server crashed before answering")
        }
        switch fault {
        case .dropResponse: throw SyncClientError.unreachable("response lost")
        case .duplicate:
            delivered += 1
            return await server.handle(request)
        default: return response
        }
    }
}

/// A device's transport: its requests go through the simulated network.
struct SimulatedTransport: SyncTransport {
    let network: SimulatedNetwork
    let device: String

    func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
        try await network.send(request, from: device)
    }
}
