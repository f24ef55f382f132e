import Synchronization
import TipSyncServerBasics

/// The uploaded catalog's current entity tag (``entityTag(of:)``) on this instance,
/// read from the store and kept until a catalog event (``StoreEvent/catalog``, from this instance's
/// upload or another's `NOTIFY`) says it changed, and for at most ``maximumAge`` (so a catalog written
/// to the database by `tipsync-server catalog put` beside a running server reaches pull answers
/// within it): every pull answer carries the tag, so it must not cost a database read per pull.
package final class CatalogVersion: Sendable {
    private struct State {
        /// `nil`: unknown, read it; `.some(nil)`: no catalog uploaded.
        package var tag: String??
        /// Bumped by every invalidation, so a read that began before one never caches what it read.
        package var generation: UInt64 = 0
        package var readAt: ContinuousClock.Instant?
    }

    /// How long a tag read from the store is trusted without an event.
    package static let maximumAge: Duration = .seconds(1)

    private let state = Mutex(State())

    package init() {}

    /// The catalog version's strong entity tag: `"` + the first 32 hex digits of the SHA-256 of the
    /// catalog's text as uploaded + `"`. Every instance computes the same tag for the same catalog.
    package static func entityTag(of text: String) -> String {
        "\"" + TokenHasher.hash(text).prefix(32) + "\""
    }

    /// The current tag, or `nil` when no catalog was uploaded.
    package func current(_ store: any InsightStore) async throws -> String? {
        let now = ContinuousClock.now
        let (known, generation) = state.withLock { state in
            if let readAt = state.readAt, readAt.duration(to: now) > Self.maximumAge { state.tag = nil }
            return (state.tag, state.generation)
        }
        if let known { return known }
        let tag = try await store.catalogJSON().map(Self.entityTag(of:))
        state.withLock { state in
            guard state.generation == generation else { return }
            state.tag = .some(tag)
            state.readAt = now
        }
        return tag
    }

    /// The catalog changed (or this instance may have missed that it did): read it again.
    package func invalidate() {
        state.withLock {
            $0.tag = nil
            $0.generation &+= 1
        }
    }
}
