import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP exchange with the sync server. The default is ``URLSessionTransport`` (Linux and Apple
/// platforms, no server dependencies); tests may substitute their own.
public protocol SyncTransport: Sendable {
    func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse
}

public struct SyncHTTPRequest: Sendable, Hashable {
    public var method: String
    /// Path and query, e.g. `/v1/pull?cursor=12`.
    public var path: String
    public var headers: [String: String]
    public var body: Data?
    /// How long to wait for the response.
    public var timeout: TimeInterval

    public init(
        method: String, path: String, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

public struct SyncHTTPResponse: Sendable, Hashable {
    public var status: Int
    public var body: Data
    /// Response headers, names in lowercase (`retry-after`).
    public var headers: [String: String]

    public init(status: Int, body: Data, headers: [String: String] = [:]) {
        self.status = status
        self.body = body
        self.headers = headers
    }
}

/// ``SyncTransport`` over `URLSession`.
public struct URLSessionTransport: SyncTransport {
    public let baseURL: URL
    let session: URLSession

    public init(baseURL: URL, session: URLSession = URLSession(configuration: .ephemeral)) {
        self.baseURL = baseURL
        self.session = session
    }

    public func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
        guard let url = URL(string: request.path, relativeTo: baseURL) else {
            throw SyncClientError.invalidServerURL(baseURL.absoluteString + request.path)
        }
        var urlRequest = URLRequest(url: url, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let (data, response) = try await Self.perform(urlRequest, on: session)
        guard let http = response as? HTTPURLResponse else { throw SyncClientError.transport("not an HTTP response") }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return SyncHTTPResponse(status: http.statusCode, body: data, headers: headers)
    }

    /// `session.data(for:)`, with a cancellation that cannot deadlock. On Linux, cancelling a task
    /// that awaits `URLSession.data(for:)` as its response arrives can deadlock FoundationNetworking
    /// (swift-corelibs-foundation#5412, fixed upstream after Swift 6.3.1): the canceller holds the task's
    /// status lock while it waits for the session's queue, and that queue waits for the same lock to
    /// resume the task. Seen here as an agent that never exited on SIGTERM. So the request runs with a
    /// completion handler, and cancelling only schedules `URLSessionTask.cancel()` on another queue.
    static func perform(_ request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        let pending = PendingRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: error ?? URLError(.badServerResponse))
                    }
                }
                pending.start(task)
            }
        } onCancel: {
            pending.cancel()
        }
    }
}

/// The `URLSessionTask` of one request and whether it was cancelled (cancellation may come before the
/// task exists). Cancelling happens on a global queue, never on the thread that cancelled the Swift task.
final class PendingRequest: Sendable {
    private let state = Mutex<(task: URLSessionTask?, cancelled: Bool)>((nil, false))

    func start(_ task: URLSessionTask) {
        let cancelled = state.withLock {
            $0.task = task
            return $0.cancelled
        }
        if cancelled { Self.cancelElsewhere(task) } else { task.resume() }
    }

    func cancel() {
        let task = state.withLock {
            $0.cancelled = true
            return $0.task
        }
        if let task { Self.cancelElsewhere(task) }
    }

    private static func cancelElsewhere(_ task: URLSessionTask) {
        DispatchQueue.global().async { task.cancel() }
    }
}
