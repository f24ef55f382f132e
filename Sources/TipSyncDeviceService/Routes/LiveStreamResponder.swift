package import Hummingbird
import TipSyncServerBasics
import TipSyncStorage

/// The application's responder: the router's, except that `GET /v1/live` is answered in a child task,
/// so the connection's own task stays shallow while the stream is open for hours. (This matters for a
/// stream asked for after other requests on its connection, which Hummingbird's connection task
/// serves; one opened as its connection's first request is served on the connection's pipeline,
/// with no task while it idles: ``SyncServerChannel``.)
///
/// A task keeps the memory its deepest moment needed until it ends (Swift's task allocator keeps
/// the slabs it grew into). Routing, the middleware chain and authentication need more than ten
/// kilobytes of async frames; in the connection's task a live stream would hold them for its whole
/// life. In a child task they are freed when the handler returns the stream's response; what stays is
/// the connection, the frames above the router and the body writer (docs/benchmark-history.md, idle-connections).
/// The child is a task group's (allocated on its own, freed when it ends), not an `async let` (whose
/// child lives in the parent's allocator).
package struct LiveStreamResponder<Base: HTTPResponder>: HTTPResponder {
    let base: Base

    package init(base: Base) {
        self.base = base
    }

    package func respond(to request: Request, context: Base.Context) async throws -> Response {
        guard request.method == .get, request.uri.path == "/v1/live" else {
            return try await base.respond(to: request, context: context)
        }
        let handed = Handed(base: base, request: request, context: context)
        let child = Task { try await handed.base.respond(to: handed.request, context: handed.context) }
        return try await withTaskCancellationHandler {
            try await child.value
        } onCancel: {
            child.cancel()
        }
    }

    /// What the child task needs. Sound without the compiler's check: the child uses it while this
    /// task only waits for the child, so it is never used from two tasks at once.
    private struct Handed: @unchecked Sendable {
        let base: Base
        let request: Request
        let context: Base.Context
    }
}
