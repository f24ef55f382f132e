package import CoreMetrics
import Dispatch
package import Hummingbird
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// Request metrics, the families and dimensions Hummingbird's `MetricsMiddleware` records, made in the
/// application's own metrics factory (so each application, and each test, counts its own):
/// `hb_requests` by route, method and status; `http_server_request_duration` (seconds) by the same;
/// `hb_request_errors` by route, method and the status of the error thrown; and
/// `http_server_active_requests` by method.
///
/// Unlike Hummingbird's, it leaves a response with a known length as it is and takes the duration when
/// the response is ready. Hummingbird's wraps every body in a closure to take the duration after the
/// body is written, and a closure body loses the transport's fast path for a single buffer (head, body
/// and end in one write): each response was three writes to the channel, about 7 µs of server CPU per
/// request (`tipsync-bench request-floor`, docs/benchmark-history.md). A streamed body of unknown length (a live
/// stream) is still measured until it has been written.
package struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let cache: RequestMetricsCache

    package init(cache: RequestMetricsCache) {
        self.cache = cache
    }

    init(factory: any MetricsFactory) {
        cache = RequestMetricsCache(factory: factory)
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        let start = DispatchTime.now().uptimeNanoseconds
        let active = cache.activeRequests(request.method)
        active.increment()
        do {
            var response = try await next(request, context)
            let endpoint = cache.endpoint(
                .init(route: context.endpointPath ?? "Unknown", method: request.method, status: response.status))
            guard response.body.contentLength == nil else {
                endpoint.record(since: start)
                active.decrement()
                return response
            }
            let body = response.body
            response.body = ResponseBody { writer in
                defer {
                    endpoint.record(since: start)
                    active.decrement()
                }
                try await body.write(writer)
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            let endpoint = cache.endpoint(
                .init(route: context.endpointPath ?? "NotFound", method: request.method, status: status))
            endpoint.requests.increment()
            endpoint.errors.increment()
            active.decrement()
            throw error
        }
    }
}

/// The metrics of each route, method and status, and of each method, made once: making a metric with
/// dimensions is a lookup in the registry under its lock.
package final class RequestMetricsCache: Sendable {
    struct Key: Hashable {
        let route: String
        let method: HTTPRequest.Method
        let status: HTTPResponse.Status
    }

    struct Endpoint: Sendable {
        let requests: Counter
        let duration: Timer
        let errors: Counter

        func record(since start: UInt64) {
            requests.increment()
            duration.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - start)
        }
    }

    private let factory: any MetricsFactory
    private let endpoints = Mutex<[Key: Endpoint]>([:])
    private let methods = Mutex<[HTTPRequest.Method: Meter]>([:])

    package init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func activeRequests(_ method: HTTPRequest.Method) -> Meter {
        methods.withLock { methods in
            if let meter = methods[method] { return meter }
            let meter = Meter(
                label: "http.server.active_requests", dimensions: [("http.request.method", method.rawValue)],
                factory: factory)
            methods[method] = meter
            return meter
        }
    }

    func endpoint(_ key: Key) -> Endpoint {
        endpoints.withLock { endpoints in
            if let endpoint = endpoints[key] { return endpoint }
            let dimensions = [
                ("http.route", key.route), ("http.request.method", key.method.rawValue),
                ("http.response.status_code", String(key.status.code)),
            ]
            let endpoint = Endpoint(
                requests: Counter(label: "hb.requests", dimensions: dimensions, factory: factory),
                duration: Timer(
                    label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds,
                    factory: factory),
                errors: Counter(
                    label: "hb.request.errors",
                    dimensions: [
                        ("http.route", key.route), ("http.request.method", key.method.rawValue),
                        ("error.type", String(key.status.code)),
                    ], factory: factory))
            endpoints[key] = endpoint
            return endpoint
        }
    }
}
