package import Logging
package import TipSyncStorage

/// Fills ``TokenIdentityCache`` with the newest stored tokens when the server starts.
///
/// A restarted server's devices all reconnect within seconds, and each one's first request found
/// its token unknown to the cache: a lookup in the store (a trip to a database reader and back)
/// before the request's own read. One read of the newest tokens, made once at start, saves those
/// trips. Safe for the same reason the cache is: a remembered token is only ever used by a route
/// whose store operation confirms it (``UnconfirmedToken``), so a token revoked since is refused
/// as before. Runs before the server listens (tens of milliseconds for tens of thousands of
/// tokens); a failed read is logged and the server starts with nothing remembered.
package struct TokenIdentityWarmup: Sendable {
    let store: any IdentityStore
    let tokens: TokenIdentityCache
    let logger: Logger

    package init(store: any IdentityStore, tokens: TokenIdentityCache, logger: Logger = Logger(label: "tipsync-server"))
    {
        self.store = store
        self.tokens = tokens
        self.logger = logger
    }

    /// Remembers up to the cache's capacity of the newest tokens.
    package func warm() async throws {
        tokens.remember(try await store.newestTokens(limit: tokens.capacity))
    }

    /// ``warm()``, a failure logged.
    package func run() async {
        do {
            try await warm()
        } catch {
            logger.warning("could not read the device tokens to remember at start: \(error)")
        }
    }
}
