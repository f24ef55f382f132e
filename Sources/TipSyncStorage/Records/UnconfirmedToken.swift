package import TipSyncServerBasics

/// A device token whose identity came from ``TokenIdentityCache`` rather than the store (which filled
/// it from an earlier lookup, or from ``IdentityStore/newestTokens(limit:)`` at start). The store
/// operation serving the request (a push, a pull, a live stream's first read) checks, first thing in its own transaction, that
/// the token still names ``identity``; when it does not (revoked, the account erased), it throws
/// ``UnconfirmedToken/Gone`` and stores nothing. A revoked token is thus refused at its next request
/// exactly as without the cache (protocol.md, section 6).
package struct UnconfirmedToken: Sendable, Hashable {
    /// The token's SHA-256 (``TokenHasher``), as stored.
    package let hash: String
    /// The device the cache says the token names.
    package let identity: DeviceIdentity

    package init(hash: String, identity: DeviceIdentity) {
        self.hash = hash
        self.identity = identity
    }

    /// The token no longer names the device: the request is answered `401` and changed nothing.
    package struct Gone: Error, Sendable {
        package init() {}
    }
}
