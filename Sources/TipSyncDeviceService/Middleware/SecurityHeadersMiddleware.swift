package import Hummingbird
import TipSyncServerBasics
import TipSyncStorage

/// The headers that tell a browser how to treat an answer, on every answer — error answers too
/// (outside ``ErrorMiddleware``): `X-Content-Type-Options: nosniff` everywhere; under `/console`
/// also no framing (`X-Frame-Options`, CSP `frame-ancestors`), the console's Content Security Policy
/// and `Cache-Control: no-store`. The console's 404 for an unknown account was JSON without them
/// (issue 59, item 6).
package struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    package init() {}

    static var consolePolicy: String {
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'"
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var response = try await next(request, context)
        let path = request.uri.path
        for field in Self.headers(path: path) { response.headers[field.name] = field.value }
        if Self.isConsole(path), response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    static func isConsole(_ path: String) -> Bool { path == "/console" || path.hasPrefix("/console/") }

    /// The headers every answer for `path` carries — also what the connection layer adds to what it
    /// refuses below the router (``TipSyncNetworking/ConnectionGuard``).
    package static func headers(path: String) -> HTTPFields {
        var headers = HTTPFields()
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        if isConsole(path) {
            headers[.init("X-Frame-Options")!] = "DENY"
            headers[.init("Content-Security-Policy")!] = consolePolicy
        }
        return headers
    }
}
