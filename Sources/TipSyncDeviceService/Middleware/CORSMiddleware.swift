package import Hummingbird
import TipSyncServerBasics
import TipSyncStorage

/// Cross-origin requests to the device API (`/v1/…`) from the web origins an operator allows
/// (`--cors-origins`, protocol.md §5): preflights are answered here, and every `/v1` answer —
/// errors included — carries `Access-Control-Allow-Origin` for an allowed `Origin`. Devices
/// authenticate with a bearer header, never cookies, so no credentials mode is offered. The admin
/// API and the console are never opened to other origins.
package struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Exact origins (`https://app.example.com`), or `*` for any.
    let origins: Set<String>

    package init(origins: Set<String>) {
        self.origins = origins
    }

    static var allowedMethods: String { "GET, HEAD, POST" }
    static var allowedHeaders: String {
        "Authorization, Content-Type, Content-Encoding, If-None-Match, TipSync-Context"
    }
    /// What a web client reads: the wait after `429`, the catalog's version.
    static var exposedHeaders: String { "Retry-After, ETag" }
    static var maxAgeSeconds: Int { 600 }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        guard request.uri.path.hasPrefix("/v1/"), let origin = request.headers[.origin], allows(origin) else {
            return try await next(request, context)
        }
        let allowed = origins.contains("*") ? "*" : origin
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers = HTTPFields()
            headers[.accessControlAllowOrigin] = allowed
            headers[.accessControlAllowMethods] = Self.allowedMethods
            headers[.accessControlAllowHeaders] = Self.allowedHeaders
            headers[.accessControlMaxAge] = String(Self.maxAgeSeconds)
            headers[.vary] = "Origin"
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers.append(contentsOf: answerHeaders(origin: origin, path: request.uri.path))
        return response
    }

    /// The CORS headers of an answer (not a preflight's) to a request from `origin` for `path`:
    /// none unless it is a `/v1` path and the origin is allowed. Also what the connection layer adds
    /// to what it refuses below the router (``TipSyncNetworking/ConnectionGuard``).
    package func answerHeaders(origin: String?, path: String) -> HTTPFields {
        var headers = HTTPFields()
        guard path.hasPrefix("/v1/"), let origin, allows(origin) else { return headers }
        headers[.accessControlAllowOrigin] = origins.contains("*") ? "*" : origin
        headers[.accessControlExposeHeaders] = Self.exposedHeaders
        headers[.vary] = "Origin"
        return headers
    }

    func allows(_ origin: String) -> Bool { origins.contains("*") || origins.contains(origin) }
}
