import Foundation

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

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
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
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else { throw SyncClientError.transport("not an HTTP response") }
        return SyncHTTPResponse(status: http.statusCode, body: data)
    }
}
