import Foundation
import Hummingbird
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// Counts every request but monitoring (`/health`, `/metrics`) for ``MemoryRelease``.
struct ActivityMiddleware<Context: RequestContext>: RouterMiddleware {
    let memory: MemoryRelease

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if request.uri.path != "/health", request.uri.path != "/metrics" { memory.noteActivity() }
        return try await next(request, context)
    }
}
