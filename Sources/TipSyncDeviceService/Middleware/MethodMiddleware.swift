package import Hummingbird
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// Answers a known path asked with a method it does not answer with `405 method_not_allowed` and
/// `Allow`; unknown paths stay `404 not_found`. Only a request no route matched (the router's
/// `404`) is looked up in the route table: a request a route answers costs nothing here, and a
/// route's own `404` (an unknown device) passes through as it is.
package struct MethodMiddleware<Context: RequestContext>: RouterMiddleware {
    let table: RouteTable

    package init(table: RouteTable) {
        self.table = table
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError where error.status == .notFound {
            guard let allowed = table.allowedMethods(request.uri.path), !allowed.contains(request.method) else {
                throw error
            }
            throw SyncError.methodNotAllowed(request.method.rawValue, allow: allowed.map(\.rawValue))
        }
    }
}
