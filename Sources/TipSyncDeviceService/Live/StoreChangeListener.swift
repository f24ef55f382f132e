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
    /// Told when other instances' events reach this one (``Readiness/Condition/listening``) and when
    /// they stop reaching it.
    let readiness: Readiness?

    package init(store: any ChangeLogStore, notifier: ChangeNotifier, logger: Logger, readiness: Readiness? = nil) {
        self.store = store
        self.notifier = notifier
        self.logger = logger
        self.readiness = readiness
    }

    package func run() async throws {
        let notifier = notifier
        let logger = logger
        let readiness = readiness
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await store.watchChanges { event in
                        if event == .watching {
                            logger.info("watching pushes, revocations and erasures of other instances")
                            readiness?.holds(.listening)
                        }
                        notifier.handle(event)
                    }
                    readiness?.holds(.listening)  // nothing to watch (one instance): nothing to miss
                    try await gracefulShutdown()  // wait like the other services
                    return
                } catch is CancellationError {
                    return
                } catch {
                    // The listening connection dropped: listen again shortly (pulls stay correct meanwhile,
                    // streams here miss other instances' pushes: not ready until it listens again).
                    readiness?.lost(.listening)
                    try await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
}
