import Hummingbird

/// Handles `GET /v1/live` in a child task, so the connection's own task stays shallow while the
/// stream is open for hours.
///
/// A task keeps the memory its deepest moment needed until it ends: routing, authentication and the
/// middleware chain need tens of kilobytes of async frames, and a live stream's connection would hold
/// them for its whole life. In a child task they are released when the handler returns the stream's
/// response; what remains is the connection and the body writer (see BENCHMARKS.md, idle-connections).
struct LiveRequestMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard request.method == .get, request.uri.path == "/v1/live" else { return try await next(request, context) }
        return try await withoutActuallyEscaping(next) { next in
            let handler = AwaitedHandler(run: next)
            async let response = handler.run(request, context)
            return try await response
        }
    }

    /// `next`, handed to the child task. Sound without the compiler's check: the child runs it while
    /// this task waits for the child, so the closure is never used from two tasks at once.
    private struct AwaitedHandler: @unchecked Sendable {
        let run: (Request, Context) async throws -> Response
    }
}
