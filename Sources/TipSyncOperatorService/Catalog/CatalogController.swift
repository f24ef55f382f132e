import Foundation
package import Hummingbird
import TipSyncCore
package import TipSyncDeviceService
import TipSyncServerBasics
package import TipSyncStorage

/// `GET /v1/catalog` (protocol.md §16): the catalog operators uploaded (`PUT /admin/v1/catalog`), for
/// devices to evaluate tips with, revalidated cheaply: a strong `ETag` names the version, and a
/// request whose `If-None-Match` names it is answered `304 Not Modified` without a body.
package struct CatalogController {
    let store: any InsightStore

    package init(store: any InsightStore) {
        self.store = store
    }

    package func addRoutes(to group: RouterGroup<SyncRequestContext>, table: RouteTable) {
        group.on("catalog", method: .get, recordingIn: table, prefix: "/v1", use: catalog)
    }

    @Sendable func catalog(_ request: Request, context: SyncRequestContext) async throws -> Response {
        _ = try context.requireIdentity()
        guard let text = try await store.catalogJSON() else {
            throw SyncError.notFound("no catalog has been uploaded (PUT /admin/v1/catalog)")
        }
        let tag = CatalogVersion.entityTag(of: text)
        if let header = request.headers[.ifNoneMatch], Self.matches(header, tag) {
            var headers = HTTPFields()
            headers[.eTag] = tag
            headers[.cacheControl] = "no-cache"
            return Response(status: .notModified, headers: headers)
        }
        var response = ContentCoding.json(text, for: request)
        response.headers[.eTag] = tag
        // Stored by caches, but revalidated on every use: a new catalog reaches devices at once.
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    /// Whether `If-None-Match` names `tag`: `*`, or a comma-separated list of entity tags, weak ones
    /// (`W/"…"`) included — RFC 9110's weak comparison, which `If-None-Match` uses.
    static func matches(_ header: String, _ tag: String) -> Bool {
        header.split(separator: ",").contains { item in
            var candidate = item.trimmingCharacters(in: .whitespaces)
            if candidate == "*" { return true }
            if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
            return candidate == tag
        }
    }
}
