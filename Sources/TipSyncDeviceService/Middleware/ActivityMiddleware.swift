import Foundation
package import Hummingbird
import Logging
import Metrics
import ServiceLifecycle
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// Counts every request but monitoring (`/health`, `/ready`, `/metrics`) for ``MemoryRelease``.
package struct ActivityMiddleware<Context: RequestContext>: RouterMiddleware {
    let memory: MemoryRelease

    package init(memory: MemoryRelease) {
        self.memory = memory
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        if request.uri.path != "/health", request.uri.path != "/ready", request.uri.path != "/metrics" {
            memory.noteActivity()
        }
        return try await next(request, context)
    }
}
