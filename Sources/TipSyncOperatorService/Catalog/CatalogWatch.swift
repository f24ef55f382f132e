package import Logging
import ServiceLifecycle
package import TipSyncDeviceService
import TipSyncServerBasics
package import TipSyncStorage

/// Notices catalogs stored by another process — `tipsync-server catalog put|restore` beside a
/// running server, on SQLite (which has no `NOTIFY`) or on PostgreSQL when a notification was
/// missed — and tells this instance's devices (``StoreEvent/catalog``: `event: catalog` on every
/// live stream, long-polls answer), so every way of changing the catalog reaches running devices
/// within about a second (protocol.md §16). One cheap read per `interval`.
package struct CatalogWatch: Service {
    let store: any InsightStore
    let notifier: ChangeNotifier
    let interval: Duration
    let logger: Logger

    package init(store: any InsightStore, notifier: ChangeNotifier, interval: Duration, logger: Logger) {
        self.store = store
        self.notifier = notifier
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        let seen = LatestCatalogVersion()
        await Periodic.run(every: interval, immediately: true) {
            do {
                let latest = try await store.latestCatalogVersion()
                if await seen.update(latest) {
                    logger.info(
                        "a new catalog was stored", metadata: ["version": "\(latest.map(String.init) ?? "none")"])
                    notifier.handle(.catalog)
                }
            } catch {
                logger.debug("cannot read the catalog version", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// The catalog version last read; the first read only records it.
actor LatestCatalogVersion {
    private var known: Int64??

    /// Records `version`; `true` when it differs from a version read before.
    func update(_ version: Int64?) -> Bool {
        defer { known = .some(version) }
        guard let known else { return false }
        return known != version
    }
}
