import Foundation
public import TipSync

extension AgentConfiguration {
    /// What `init` learns of the credential before it writes the store: whether the server
    /// accepts it.
    public enum CredentialCheck: Sendable, Hashable {
        /// The server accepted it.
        case accepted
        /// No server answered; why, in plain words. The store is written all the same (a device may
        /// be set up offline), and `sync` says whether the token works.
        case unchecked(String)
    }

    /// Asks the server whether it accepts this configuration's credential — the token, or the one
    /// the token command prints — changing nothing there (``SyncClient/checkCredential(server:token:device:transport:)``).
    ///
    /// - Throws: ``AgentError`` `token-refused` naming the server, the device and what to do, when
    ///   the server refuses it; the token command's failure when it fails.
    public func checkCredential(transport: (any SyncTransport)? = nil) async throws -> CredentialCheck {
        var credential = token
        if let tokenCommand { credential = try await TokenCommand.run(tokenCommand) }
        do {
            try await SyncClient.checkCredential(
                server: server, token: credential, device: device, transport: transport)
            return .accepted
        } catch SyncClientError.unauthorized(let reason) {
            throw AgentError(
                .tokenRefused,
                message:
                    "the server at \(server.absoluteString) refused the token for device '\(device)' (\(reason)); nothing was written: create one with `tipsync-server tokens create --account ACCOUNT --device \(device)` and run init again"
            )
        } catch SyncClientError.rejected(let status, "not_a_sync_server", _) {
            throw AgentError(
                .badOption,
                message:
                    "\(server.absoluteString) is not a TipSync server (it answered \(status) where a sync server answers with the protocol's JSON); nothing was written: check --server"
            )
        } catch let error as SyncClientError where error.isTransient {
            return .unchecked(error.description)
        }
    }
}
