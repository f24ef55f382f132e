package import Hummingbird
import TipSyncServerBasics
import TipSyncStorage

/// When the console is off, `/console` and everything under it answer `404 not_found` saying how
/// to turn it on, instead of a bare "Not Found" that leaves an operator guessing.
package struct ConsoleOffMiddleware<Context: RequestContext>: RouterMiddleware {
    package init() {}

    static var message: String {
        "the operator console is off: start the server with 'tipsync-server serve --console' (or TIPSYNC_CONSOLE=1), "
            + "then log in at /console/login with an admin key ('tipsync-server admin-keys create --name NAME')"
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        let path = request.uri.path
        guard path == "/console" || path.hasPrefix("/console/") else { return try await next(request, context) }
        throw SyncError.notFound(Self.message)
    }
}
