import Foundation
import Hummingbird
package import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import TipSyncCore
import TipSyncServerBasics
package import TipSyncStorage

/// Wakes this instance's live connections when *another* instance on the same database accepts a
/// push (PostgreSQL `LISTEN`/`NOTIFY`); idle for single-instance backends.
package struct StoreChangeListener: Service {
    let store: any ChangeLogStore
    let notifier: ChangeNotifier
    let logger: Logger

    package init(store: any ChangeLogStore, notifier: ChangeNotifier, logger: Logger) {
        self.store = store
        self.notifier = notifier
        self.logger = logger
    }

    package func run() async throws {
        let notifier = notifier
        let logger = logger
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await store.watchChanges { event in
                        if event == .watching {
                            logger.info("watching pushes, revocations and erasures of other instances")
                        }
                        notifier.handle(event)
                    }
                    try await gracefulShutdown()  // nothing to watch: wait like the other services
                    return
                } catch is CancellationError {
                    return
                } catch {
                    // The listening connection dropped: listen again shortly (pulls stay correct meanwhile).
                    try await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
}
