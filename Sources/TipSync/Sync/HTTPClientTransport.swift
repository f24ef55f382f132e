import NIOHTTPCompression

#if NIOHTTPClient && canImport(AsyncHTTPClient)
    public import AsyncHTTPClient
    public import Foundation
    import NIOCore
    import NIOHTTP1

    /// ``SyncTransport`` over async-http-client (SwiftNIO): the default on Linux when the package's
    /// `NIOHTTPClient` trait is on. An idle live stream costs nothing here — the connection waits in
    /// epoll until bytes arrive — where URLSession on Linux polls it continuously (BENCHMARKS.md,
    /// "A device at rest").
    public struct HTTPClientTransport: SyncTransport {
        public let baseURL: URL
        let client: HTTPClient
        /// Where live streams are asked (``sharedStreamClient``).
        let streamClient: HTTPClient
        /// The largest answer ``send(_:)`` reads (a pull page is at most a few megabytes).
        static let maximumBodyBytes = 256 * 1024 * 1024

        /// The process's client for sync: `HTTPClient.shared`'s configuration, except that a
        /// connection that cannot be made fails the request at once (`connection refused`) instead
        /// of being retried until the request's deadline — the sync client backs off and retries
        /// itself, and meanwhile says it is not connected; and that a compressed answer may inflate
        /// to ``maximumBodyBytes``, however much smaller it was on the wire (the shared
        /// configuration refuses any answer that inflates more than 25 times, and a page of changes
        /// whose values repeat inflates a hundredfold: every device of the account stopped pulling).
        /// Never shut down, like `HTTPClient.shared`.
        ///
        /// It opens at most 8 connections to a server for pushes and pulls; live streams go through
        /// ``sharedStreamClient``. A process that syncs more than a few replicas with one server gives
        /// them clients of their own (``sharedClientConfiguration`` with a higher
        /// `connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit`), or its requests wait for
        /// connections — a pair (requests, streams) for each hundred or so: a pool's bookkeeping grows
        /// with its connections (async-http-client copies its list of them as each one opens), and
        /// one pair for thousands of replicas spends more on that list than on the connections
        /// (BENCHMARKS.md, "18,000 reference clients back within 15 s").
        public static let sharedClient = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: sharedClientConfiguration)

        /// The process's client for live streams: ``sharedClientConfiguration``, a pool of its own.
        ///
        /// A stream holds its connection for as long as it runs. Asked on the pool that served the
        /// device's pull, it would ride on that keep-alive connection; a server then serves it where
        /// it served the pull, which for `tipsync-server` costs several times the memory of a stream
        /// that is the first request on its connection (BENCHMARKS.md, "Reference clients in a storm,
        /// requests on the event loop"). A stream ends by closing its connection, so this pool never
        /// holds an idle one.
        public static let sharedStreamClient = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: sharedClientConfiguration)

        /// ``sharedClient``'s configuration.
        public static var sharedClientConfiguration: HTTPClient.Configuration {
            var configuration = HTTPClient.Configuration.singletonConfiguration
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.timeout.connect = .seconds(10)
            configuration.decompression = .enabled(limit: .size(maximumBodyBytes))
            return configuration
        }

        /// - Parameters:
        ///   - client: the HTTP client for pushes, pulls and the other requests (default:
        ///     ``sharedClient``).
        ///   - streamClient: the HTTP client for live streams, so that each stream is the first
        ///     request on a connection of its own (default: ``sharedStreamClient`` when `client` is
        ///     the shared one, else `client` itself — give a second client made like yours to keep
        ///     streams apart).
        public init(
            baseURL: URL, client: HTTPClient = HTTPClientTransport.sharedClient, streamClient: HTTPClient? = nil
        ) {
            self.baseURL = baseURL
            self.client = client
            self.streamClient = streamClient ?? (client === Self.sharedClient ? Self.sharedStreamClient : client)
        }

        func clientRequest(_ request: SyncHTTPRequest) throws -> HTTPClientRequest {
            guard let url = URL(string: request.path, relativeTo: baseURL)?.absoluteURL,
                url.scheme == "http" || url.scheme == "https"
            else {
                throw SyncClientError.invalidServerURL(baseURL.absoluteString + request.path)
            }
            var clientRequest = HTTPClientRequest(url: url.absoluteString)
            clientRequest.method = HTTPMethod(rawValue: request.method)
            for (name, value) in request.headers { clientRequest.headers.replaceOrAdd(name: name, value: value) }
            if let body = request.body { clientRequest.body = .bytes(ByteBuffer(bytes: body)) }
            return clientRequest
        }

        /// Sends `request` and reads the answer's head; a request that got no answer throws
        /// ``SyncClientError/unreachable(_:)`` naming the server and why, in plain words.
        func execute(_ request: SyncHTTPRequest, on client: HTTPClient) async throws -> HTTPClientResponse {
            let prepared = try clientRequest(request)
            do {
                return try await client.execute(prepared, timeout: .milliseconds(Int64(max(1, request.timeout) * 1000)))
            } catch let error as CancellationError {
                throw error
            } catch {
                throw SyncClientError.unreachable("\(Self.plainWords(error)) (\(baseURL.absoluteString))")
            }
        }

        /// Why a request got no answer, without the libraries' type names: `connection refused`.
        static func plainWords(_ error: any Error) -> String {
            if let error = error as? IOError { return String(cString: strerror(error.errnoCode)).lowercased() }
            if let error = error as? HTTPClientError {
                switch error {
                case .connectTimeout: return "connection timed out"
                case .deadlineExceeded, .readTimeout: return "no answer in time"
                case .remoteConnectionClosed: return "the server closed the connection"
                default: break
                }
            }
            if let error = error as? HTTPParserError, error == .invalidEOFState {
                return "the server closed the connection before the answer ended"
            }
            let text = String(describing: error)
            if text.contains("Connection refused") { return "connection refused" }
            if text.contains("UnknownHost") || text.contains("DNS error") {
                return "the server's name does not resolve"
            }
            return text
        }

        static func headers(of response: HTTPClientResponse) -> [String: String] {
            var headers: [String: String] = [:]
            for (name, value) in response.headers { headers[name.lowercased()] = value }
            return headers
        }

        /// `error`, met while reading an answer's body, as ``SyncClientError/unreachable(_:)`` in plain
        /// words naming the server (a cancellation stays one).
        func bodyFailure(_ error: any Error) -> any Error {
            if error is CancellationError { return error }
            return SyncClientError.unreachable("\(Self.plainWords(error)) (\(baseURL.absoluteString))")
        }

        public func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            let response = try await execute(request, on: client)
            let body: ByteBuffer
            do {
                body = try await response.body.collect(upTo: Self.maximumBodyBytes)
            } catch {
                throw bodyFailure(error)
            }
            return SyncHTTPResponse(
                status: Int(response.status.code), body: Data(body.readableBytesView),
                headers: Self.headers(of: response))
        }

        /// The answer's head within `request.timeout`; its body as it arrives, for as long as the
        /// server keeps it open (the sync client's watchdog ends a silent one). A body that breaks off
        /// (the server crashed) throws ``SyncClientError/unreachable(_:)`` saying so.
        public func stream(_ request: SyncHTTPRequest) async throws -> SyncHTTPStream? {
            let response = try await execute(request, on: streamClient)
            let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
            let reading = Task {
                do {
                    for try await piece in response.body { continuation.yield(Data(piece.readableBytesView)) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: bodyFailure(error))
                }
            }
            // Dropping the body (or cancelling its reader) ends the request and closes the connection.
            continuation.onTermination = { _ in reading.cancel() }
            return SyncHTTPStream(status: Int(response.status.code), headers: Self.headers(of: response), body: body)
        }
    }
#endif
