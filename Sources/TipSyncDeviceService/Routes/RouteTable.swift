package import Hummingbird
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// The methods each route answers, recorded as routes are registered, so that a known path asked
/// with another method gets `405 method_not_allowed` with `Allow` (never a misleading 404).
/// Filled while the router is built, read while it serves.
package final class RouteTable: Sendable {
    package init() {}

    private let routes = Mutex<[(segments: [Substring], methods: Set<HTTPRequest.Method>)]>([])

    /// Records that `path` (segments starting with `:` match any one segment) answers `method`.
    func add(_ method: HTTPRequest.Method, _ path: String) {
        let segments = path.split(separator: "/")
        routes.withLock { routes in
            if let index = routes.firstIndex(where: { $0.segments == segments }) {
                routes[index].methods.insert(method)
            } else {
                routes.append((segments, [method]))
            }
        }
    }

    /// The methods `path` answers, or `nil` for a path no route has.
    func allowedMethods(_ path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/")
        let methods = routes.withLock { routes in
            routes.filter { route in
                route.segments.count == segments.count
                    && zip(route.segments, segments).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
            }.reduce(into: Set<HTTPRequest.Method>()) { $0.formUnion($1.methods) }
        }
        return methods.isEmpty ? nil : methods.sorted { $0.rawValue < $1.rawValue }
    }
}

extension RouterMethods {
    /// Registers a route and records it in `table`; a `GET` route also answers `HEAD`: the same
    /// status and headers, no body (a live stream is never started).
    @discardableResult
    package func on(
        _ path: String, method: HTTPRequest.Method, recordingIn table: RouteTable, prefix: String = "",
        use handler: @escaping @Sendable (Request, Context) async throws -> Response
    ) -> Self {
        table.add(method, prefix + "/" + path)
        on(RouterPath(path), method: method, use: handler)
        if method == .get {
            table.add(.head, prefix + "/" + path)
            on(RouterPath(path), method: .head) { request, context -> Response in
                let response = try await handler(request, context)
                return Response(status: response.status, headers: response.headers, body: ResponseBody())
            }
        }
        return self
    }
}
