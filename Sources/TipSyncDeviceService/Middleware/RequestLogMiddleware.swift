package import Hummingbird
package import HummingbirdCore
package import Logging
import TipSyncServerBasics
import TipSyncStorage

/// Logs each request at `level` — `debug`, or `info` with the access log on (`--log-access`) —
/// (method, path, status, duration) without anything that can carry
/// a secret or a person's name: no header (`Authorization` holds tokens); in the path, account and
/// device names (`/admin/v1/accounts/{account}/devices/{device}`, `/console/accounts/{account}`)
/// written as `<account>` and `<device>` — an erased account's name must not survive in logs; of
/// the query, only the names and the values of parameters known to be harmless (`cursor`, `limit`,
/// `wait`, `after`); every other value — an `access_token`, a `key`, a console search, anything a
/// client invents — is written as `<redacted>`.
package struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    static var harmlessParameters: Set<String> { ["cursor", "limit", "wait", "after"] }
    var level: Logger.Level = .debug

    package init(level: Logger.Level = .debug) {
        self.level = level
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        let start = ContinuousClock.now
        func log(_ status: HTTPResponse.Status) {
            Self.log(
                to: context.logger, level: level, method: request.method.rawValue, target: request.uri,
                status: status, duration: ContinuousClock.now - start)
        }
        do {
            let response = try await next(request, context)
            log(response.status)
            return response
        } catch {
            // Refusals are thrown (answered by the error middleware outside this one): logged too.
            log((error as? any HTTPResponseError)?.status ?? .internalServerError)
            throw error
        }
    }

    /// One line of the access log: what the router's requests write, and what the connection layer
    /// writes for a request it refuses itself (`413` for a declared body over the limit, `400`, `405`).
    package static func log(
        to logger: Logger, level: Logger.Level, method: String, target: URI, status: HTTPResponse.Status,
        duration: Duration, refusedBy: String? = nil
    ) {
        // The line is built only when it is written: with the access log off (the default), a request
        // pays nothing to describe itself (issue 77, item 1).
        guard logger.logLevel <= level else { return }
        var metadata: Logger.Metadata = [
            "method": "\(method)", "path": "\(redactedTarget(target))", "status": "\(status.code)",
            "duration": "\(duration)",
        ]
        if let refusedBy { metadata["refused_by"] = "\(refusedBy)" }
        logger.log(level: level, "request", metadata: metadata)
    }

    /// The path and the query with every value not known to be harmless replaced by `<redacted>`.
    static func redactedTarget(_ uri: URI) -> String {
        let path = redactedPath(uri.path)
        guard let query = uri.query, !query.isEmpty else { return path }
        let parts = query.split(separator: "&").map { pair -> String in
            let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            guard pair.contains("=") else { return String(name.prefix(64)) }
            return harmlessParameters.contains(name) ? String(pair.prefix(256)) : "\(name.prefix(64))=<redacted>"
        }
        return path + "?" + parts.joined(separator: "&")
    }

    /// The path with the segment after `accounts` and after `devices` replaced by a placeholder.
    static func redactedPath(_ path: String) -> String {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for index in segments.indices.dropLast() {
            switch segments[index] {
            case "accounts": segments[index + 1] = segments[index + 1].isEmpty ? "" : "<account>"
            case "devices": segments[index + 1] = segments[index + 1].isEmpty ? "" : "<device>"
            default: break
            }
        }
        return segments.joined(separator: "/")
    }
}
