import Foundation
import JWTKit
package import Logging
import ServiceLifecycle
import Synchronization
import TipSyncServerBasics
import TipSyncStorage
import UnixSignals

/// Re-reads the JWT keys on SIGHUP and when the JWKS file changes (checked every few seconds).
/// Runs without JWT sign-in too, so that SIGHUP (`systemctl reload`) never stops the server.
package struct JWTKeyReloader: Service {
    let signIn: JWTSignIn?
    let interval: Duration
    let logger: Logger

    package init(signIn: JWTSignIn?, interval: Duration, logger: Logger) {
        self.signIn = signIn
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in await UnixSignalsSequence(trapping: .sighup) { await reload("SIGHUP", force: true) }
                }
                group.addTask {
                    await Periodic.run(every: interval) { await reload("the JWKS file changed", force: false) }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    private func reload(_ why: String, force: Bool) async {
        guard let signIn else {
            if force { logger.notice("SIGHUP: nothing to reload (JWT sign-in is off)") }
            return
        }
        do {
            if force {
                try await signIn.reload()
            } else if try await !signIn.reloadIfChanged() {
                return
            }
            logger.notice("JWT keys reloaded", metadata: ["why": "\(why)"])
        } catch {
            logger.error("JWT keys not reloaded; the previous keys stay in use", metadata: ["error": "\(error)"])
        }
    }
}
