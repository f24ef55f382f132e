package import Hummingbird

/// The application's responder: the router's, with every request but monitoring (`/health`,
/// `/ready`, `/metrics`) admitted by ``RequestAdmission`` and answered in a child task of its own.
///
/// A task keeps the memory its deepest moment needed until it ends (Swift's task allocator keeps
/// the slabs it grew into). Routing, the middleware chain, authentication and a route need some
/// 26 KB of async frames; in the connection's task they would stay for as long as the connection
/// stays open — for hours under a live stream, and for a keep-alive connection's idle minute. In a
/// child task they are freed when the response is made; what stays is the connection's task, the
/// frames above this responder and, for a stream, its body writer (docs/benchmark-history.md,
/// idle-connections). The child is a task group's (allocated on its own, freed when it ends, and
/// run on the connection's event loop like its parent), not an `async let` (whose child lives in the
/// parent's allocator).
///
/// A request's body is read before it waits for admission: a client that sends its body slowly
/// holds its own connection (until `requestBodyTimeout`), never a place other devices wait for.
/// The bytes it may send are bounded below the router (``ConnectionGuard``'s `maxBodyBytes`); the
/// routes read the collected body with their own bounds and errors, as before.
package struct AdmittedResponder<Base: HTTPResponder>: HTTPResponder {
    let base: Base
    let admission: RequestAdmission

    package init(base: Base, admission: RequestAdmission) {
        self.base = base
        self.admission = admission
    }

    package func respond(to request: Request, context: Base.Context) async throws -> Response {
        if Self.isMonitoring(request) {
            return try await base.respond(to: request, context: context)
        }
        var request = request
        if Self.hasBody(request) {
            _ = try await request.collectBody(upTo: .max)
        }
        await admission.enter()
        defer { admission.leave() }
        let handed = Handed(base: base, request: request, context: context)
        return try await withThrowingTaskGroup(of: Response.self) { group in
            group.addTask {
                try await RequestAdmission.$held.withValue(admission) {
                    try await handed.base.respond(to: handed.request, context: handed.context)
                }
            }
            // The one child's answer, or its error.
            return try await group.next()!
        }
    }

    /// A load balancer's and a scraper's questions are answered at once, whatever waits.
    static func isMonitoring(_ request: Request) -> Bool {
        guard request.method == .get else { return false }
        switch request.uri.path {
        case "/health", "/ready", "/metrics": return true
        default: return false
        }
    }

    /// Whether the request's head announces a body (a length above zero, or chunked).
    static func hasBody(_ request: Request) -> Bool {
        if let length = request.headers[.contentLength] { return length != "0" }
        return request.headers[.transferEncoding] != nil
    }

    /// What the child task needs. Sound without the compiler's check: the child uses it while this
    /// task only waits for the child, so it is never used from two tasks at once.
    private struct Handed: @unchecked Sendable {
        let base: Base
        let request: Request
        let context: Base.Context
    }
}
