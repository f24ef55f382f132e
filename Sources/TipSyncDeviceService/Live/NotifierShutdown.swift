import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import TipSyncCore
import TipSyncServerBasics
import TipSyncStorage

/// Closes live streams when the server shuts down gracefully.
package struct NotifierShutdown: Service {
    let notifier: ChangeNotifier

    package init(notifier: ChangeNotifier) {
        self.notifier = notifier
    }

    package func run() async throws {
        try? await gracefulShutdown()
        notifier.finishAll()
    }
}
