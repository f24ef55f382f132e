import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import TipSyncCore

/// Closes live streams when the server shuts down gracefully.
struct NotifierShutdown: Service {
    let notifier: ChangeNotifier

    func run() async throws {
        try? await gracefulShutdown()
        notifier.finishAll()
    }
}
