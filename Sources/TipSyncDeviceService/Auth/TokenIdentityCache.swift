import Synchronization
package import TipSyncServerBasics
package import TipSyncStorage

/// Which device each recently used device token names, so a push or a pull need not ask the store
/// before it starts: asking costs a trip to a database reader and back (two thread wake-ups), about a
/// third of a single-change push's CPU.
///
/// An entry is never trusted alone. A token names one device for its whole life (revoking deletes
/// it, it is never pointed elsewhere), so a remembered identity is either still right or the token is
/// gone; the store operation that serves the request confirms the token in its own transaction
/// (``UnconfirmedToken``) and refuses it, changing nothing, when it is gone — revoked by this
/// process, another instance or the CLI. Only routes whose store operation confirms use the cache
/// (``SyncController/confirmsTokenInStore(_:)``). Unknown tokens are never remembered; a starting
/// server remembers the newest stored ones (``TokenIdentityWarmup``).
package final class TokenIdentityCache: Sendable {
    /// At most this many tokens are remembered; when full it starts again empty.
    let capacity: Int
    private let entries = Mutex<[String: DeviceIdentity]>([:])

    package init(capacity: Int = 65_536) {
        self.capacity = capacity
    }

    /// The device the token with this hash named when it was last looked up.
    package func identity(forTokenHash hash: String) -> DeviceIdentity? {
        entries.withLock { $0[hash] }
    }

    /// Remembers what the store answered for a token.
    package func remember(_ identity: DeviceIdentity, forTokenHash hash: String) {
        entries.withLock { entries in
            if entries.count >= capacity, entries[hash] == nil { entries.removeAll(keepingCapacity: true) }
            entries[hash] = identity
        }
    }

    /// Remembers stored tokens (``TokenIdentityWarmup``) while there is room; what is already
    /// remembered stays.
    package func remember(_ tokens: [UnconfirmedToken]) {
        entries.withLock { entries in
            entries.reserveCapacity(min(capacity, entries.count + tokens.count))
            for token in tokens where entries.count < capacity && entries[token.hash] == nil {
                entries[token.hash] = token.identity
            }
        }
    }

    /// Forgets a token the store no longer knows.
    package func forget(tokenHash hash: String) {
        _ = entries.withLock { $0.removeValue(forKey: hash) }
    }

    /// Forgets every token (a memory release after a burst: the devices that come back are looked up
    /// again, once each). Its storage goes too: a burst of 5,000 devices left about a megabyte of
    /// entries, pinning pages of the heap, round after round (docs/benchmark-history.md, "Load").
    package func forgetAll() {
        entries.withLock { $0 = [:] }
    }

    /// How many tokens are remembered (for tests).
    package var count: Int { entries.withLock { $0.count } }
}
