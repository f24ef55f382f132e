import Hummingbird
import HummingbirdCore
import Logging

/// Logs each request at debug level (method, path, status, duration) without anything that can carry
/// a secret: no header (`Authorization` holds tokens) and, of the query, only the names and the values
/// of parameters known to be harmless (`cursor`, `limit`, `wait`, `after`); every other value — an
/// `access_token`, a `key`, anything a client invents — is written as `<redacted>`.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    static var harmlessParameters: Set<String> { ["cursor", "limit", "wait", "after", "q"] }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        context.logger.debug(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)", "path": "\(Self.redactedTarget(request.uri))",
                "status": "\(response.status.code)", "duration": "\(ContinuousClock.now - start)",
            ])
        return response
    }

    /// The path and the query with every value not known to be harmless replaced by `<redacted>`.
    static func redactedTarget(_ uri: URI) -> String {
        guard let query = uri.query, !query.isEmpty else { return uri.path }
        let parts = query.split(separator: "&").map { pair -> String in
            let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            guard pair.contains("=") else { return String(name.prefix(64)) }
            return harmlessParameters.contains(name) ? String(pair.prefix(256)) : "\(name.prefix(64))=<redacted>"
        }
        return uri.path + "?" + parts.joined(separator: "&")
    }
}
