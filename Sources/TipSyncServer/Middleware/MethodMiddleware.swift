import Hummingbird
import Synchronization

/// Answers a known path asked with a method it does not answer with `405 method_not_allowed` and
/// `Allow`. Only reached by requests no route matched; unknown paths stay `404 not_found`.
struct MethodMiddleware<Context: RequestContext>: RouterMiddleware {
    let table: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let allowed = table.allowedMethods(request.uri.path), !allowed.contains(request.method) else {
            return try await next(request, context)
        }
        throw SyncError.methodNotAllowed(request.method.rawValue, allow: allowed.map(\.rawValue))
    }
}
