package import Hummingbird
import Logging
package import NIOCore
import NIOEmbedded
package import TipSyncServerBasics
package import TipSyncStorage

/// The request context of the sync API: carries the authenticated device once the bearer middleware ran.
package struct SyncRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    package var identity: DeviceIdentity?
    /// Set when ``identity`` came from ``TokenIdentityCache``: the route's store operation confirms
    /// the token (push, pull).
    package var unconfirmedToken: UnconfirmedToken?
    /// When the credential stops being valid (a JWT's `exp`, milliseconds): live streams end then.
    package var credentialExpiresAt: Int64?
    /// The admin key's name, once the admin middleware accepted the request (`/admin/v1`).
    package var adminKey: String?
    /// The client's IP address (the connection's peer; `nil` in tests without a socket).
    package let remoteAddress: String?
    /// Completes when the client's connection closes: long-polls and live streams stop waiting then.
    package let connectionClosed: EventLoopFuture<Void>?
    /// Closes the client's connection (a live stream whose client does not read).
    package let closeConnection: @Sendable () -> Void
    /// Bodies are collected up to the configured limit by the routes themselves.
    package var maxUploadSize: Int { .max }

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connectionClosed = source.channel.closeFuture
        closeConnection = { [channel = source.channel] in channel.close(promise: nil) }
        // An EmbeddedChannel (the simulator's in-process server) may only be asked from the thread
        // that made it, and has no peer anyway.
        remoteAddress =
            source.channel is EmbeddedChannel ? nil : source.channel.remoteAddress?.ipAddress
    }

    /// The authenticated device; routes behind the bearer middleware always have one.
    package func requireIdentity() throws -> DeviceIdentity {
        guard let identity else { throw SyncError.unauthorized("missing bearer token") }
        return identity
    }
}
