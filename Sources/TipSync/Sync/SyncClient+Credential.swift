public import Foundation

extension SyncClient {
    /// Asks the server at `server` whether it accepts `token`, changing nothing there:
    /// `GET /v1/devices/{device}` (protocol.md §5), which answers `200`, or `404` for a device the
    /// account has not seen yet, to any credential it accepts. What `tipsync-agent init` runs before
    /// it writes a store.
    ///
    /// - Throws: ``SyncClientError/unauthorized(_:)`` when the token is refused (with the server's
    ///   reason), ``SyncClientError/unreachable(_:)`` when no server answered,
    ///   ``SyncClientError/rejected(status:code:message:)`` for any other answer, including one
    ///   that is not a sync server's (code `not_a_sync_server`).
    public static func checkCredential(
        server: URL, token: String, device: String, transport: (any SyncTransport)? = nil
    ) async throws {
        let transport = transport ?? defaultTransport(server)
        let name = device.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? device
        let response: SyncHTTPResponse
        do {
            response = try await transport.send(
                SyncHTTPRequest(
                    method: "GET", path: "/v1/devices/\(name)",
                    headers: ["Authorization": "Bearer \(token)", "Accept": "application/json"], timeout: 10))
        } catch let error as SyncClientError {
            throw error
        } catch {
            throw SyncClientError.unreachable(error.localizedDescription)
        }
        switch response.status {
        case 200 where (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["device"] != nil:
            return
        case 404 where errorCode(response.body)?.code == ErrorCode.notFound.rawValue:
            return
        case 401: throw refusedToken(response)
        case 200, 404:
            // Something answered, but not as a sync server does: a wrong URL or a proxy's page.
            throw SyncClientError.rejected(
                status: response.status, code: "not_a_sync_server",
                message: "GET /v1/devices/\(name) answered \(response.status) without the protocol's body")
        default: throw rejection(response)
        }
    }
}
