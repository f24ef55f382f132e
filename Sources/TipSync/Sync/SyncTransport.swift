public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// One HTTP exchange with the sync server. The default is ``URLSessionTransport`` (Linux and Apple
/// platforms, no server dependencies); tests may substitute their own.
public protocol SyncTransport: Sendable {
    func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse

    /// Sends a request whose answer is read as it arrives (the live stream, `GET /v1/live`).
    /// `nil`: this transport cannot, and the client long-polls instead (the default).
    func stream(_ request: SyncHTTPRequest) async throws -> SyncHTTPStream?
}

extension SyncTransport {
    public func stream(_ request: SyncHTTPRequest) async throws -> SyncHTTPStream? { nil }
}

/// A response whose body arrives in pieces. Dropping ``body`` (or cancelling the task reading it)
/// ends the request.
public struct SyncHTTPStream: Sendable {
    public var status: Int
    /// Response headers, names in lowercase.
    public var headers: [String: String]
    /// The body as it arrives; finishes when the server ends the response, throws when the
    /// connection fails.
    public var body: AsyncThrowingStream<Data, any Error>

    public init(status: Int, headers: [String: String] = [:], body: AsyncThrowingStream<Data, any Error>) {
        self.status = status
        self.headers = headers
        self.body = body
    }
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
        let (data, response) = try await Self.perform(try urlRequest(request), on: session)
        guard let http = response as? HTTPURLResponse else { throw SyncClientError.transport("not an HTTP response") }
        return SyncHTTPResponse(status: http.statusCode, body: data, headers: Self.headers(of: http))
    }

    /// The `URLRequest` for a request to the server.
    func urlRequest(_ request: SyncHTTPRequest) throws -> URLRequest {
        guard let url = URL(string: request.path, relativeTo: baseURL) else {
            throw SyncClientError.invalidServerURL(baseURL.absoluteString + request.path)
        }
        var urlRequest = URLRequest(url: url, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    /// A response's headers, names in lowercase.
    static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return headers
    }

    /// Streams the answer through a session of its own whose delegate hands on each piece as it
    /// arrives. (URLSession on Linux does not end a stream that stays silent past `timeout`: the
    /// sync client's watchdog does, ``SyncConfiguration/liveStreamSilence``.)
    public func stream(_ request: SyncHTTPRequest) async throws -> SyncHTTPStream? {
        let urlRequest = try urlRequest(request)
        let receiver = StreamReceiver()
        let session = URLSession(configuration: .ephemeral, delegate: receiver, delegateQueue: nil)
        let task = session.dataTask(with: urlRequest)
        receiver.onEnd {
            // Off the thread that ended the stream (see ``perform(_:on:)``).
            DispatchQueue.global().async {
                task.cancel()
                session.finishTasksAndInvalidate()
            }
        }
        let response = try await withTaskCancellationHandler {
            try await receiver.head { task.resume() }
        } onCancel: {
            receiver.end(throwing: CancellationError())
        }
        return SyncHTTPStream(status: response.statusCode, headers: Self.headers(of: response), body: receiver.body)
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

/// A streamed request's delegate: the response head once, then each piece of the body as it arrives.
final class StreamReceiver: NSObject, URLSessionDataDelegate, Sendable {
    let body: AsyncThrowingStream<Data, any Error>
    private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    private let state = Mutex<State>(State())

    private struct State {
        var head: CheckedContinuation<HTTPURLResponse, any Error>?
        var failure: (any Error)?
        var ended = false
        var endings: [@Sendable () -> Void] = []
    }

    override init() {
        (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        super.init()
        continuation.onTermination = { [weak self] _ in self?.end(throwing: nil) }
    }

    /// Waits for the response head; `start` sends the request.
    func head(start: () -> Void) async throws -> HTTPURLResponse {
        try await withCheckedThrowingContinuation { continuation in
            let failure = state.withLock { state -> (any Error)? in
                if let failure = state.failure { return failure }
                state.head = continuation
                return nil
            }
            if let failure { continuation.resume(throwing: failure) } else { start() }
        }
    }

    /// Runs `action` once the stream ends, whichever way.
    func onEnd(_ action: @escaping @Sendable () -> Void) {
        let ended = state.withLock { state in
            if !state.ended { state.endings.append(action) }
            return state.ended
        }
        if ended { action() }
    }

    /// Ends the stream (`nil`: the server finished it).
    func end(throwing error: (any Error)?) {
        let (head, endings) = state.withLock { state in
            defer {
                state.head = nil
                state.endings = []
            }
            if !state.ended {
                state.ended = true
                state.failure = error ?? URLError(.networkConnectionLost)
            }
            return (state.head, state.endings)
        }
        head?.resume(throwing: error ?? URLError(.badServerResponse))
        continuation.finish(throwing: error)
        for action in endings { action() }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let head = state.withLock { state in
            defer { state.head = nil }
            return state.head
        }
        if let http = response as? HTTPURLResponse {
            head?.resume(returning: http)
        } else {
            head?.resume(throwing: SyncClientError.transport("not an HTTP response"))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        end(throwing: error)
    }
}
