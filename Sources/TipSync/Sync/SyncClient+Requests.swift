import Foundation
import TipSyncCore

/// One request and its answer: the credential, gzip, `429` and an expired JWT retried, the clock
/// correction read from the answer, bodies decoded and errors read from their structure.
extension SyncClient {
    /// Sends one request, retrying after `429` and an expired JWT. A `compressible` body of at least
    /// 1,024 bytes goes gzipped while ``compressesPushes`` holds.
    func send(
        _ method: String, _ path: String, body: Data? = nil, headers extra: [String: String] = [:],
        compressible: Bool = false, timeout: TimeInterval = 30
    ) async throws -> (SyncHTTPResponse, Date) {
        var refreshed = false
        var rateLimited = 0
        // Compressed once; retries after 429 or a token refresh send the same bytes.
        let gzipped =
            compressible && compressesPushes && (body?.count ?? 0) >= 1024 ? body.flatMap { Gzip.compress($0) } : nil
        while true {
            var headers = ["Authorization": "Bearer \(try await currentToken())", "Accept": "application/json"]
            headers[DeviceContext.headerName] = replica.deviceContext.headerValue
            headers.merge(extra) { _, new in new }
            if body != nil { headers["Content-Type"] = "application/json" }
            var wire = body
            if compressesPushes, let gzipped {
                wire = gzipped
                headers["Content-Encoding"] = "gzip"
            }
            let sent = physicalNow()
            let response: SyncHTTPResponse
            do {
                response = try await transport.send(
                    SyncHTTPRequest(method: method, path: path, headers: headers, body: wire, timeout: timeout))
            } catch let error as SyncClientError {
                throw error
            } catch {
                throw SyncClientError.unreachable("\(error.localizedDescription)")
            }
            switch response.status {
            case 401
            where Self.errorCode(response.body)?.code == ErrorCode.tokenExpired.rawValue
                && configuration.tokenProvider != nil && !refreshed:
                // The JWT expired: ask for a fresh one, once per request.
                token = nil
                refreshed = true
            case 401
            where Self.errorCode(response.body)?.code == ErrorCode.tokenExpired.rawValue
                && configuration.tokenProvider != nil:
                // Expired again right after a refresh: the provider's token is stale for now. Not a
                // reason to stop syncing for good: back off, and ask the provider again then.
                token = nil
                throw Self.rejection(response)
            case 401:
                throw Self.refusedToken(response)
            case 415 where headers["Content-Encoding"] != nil,
                400
            where headers["Content-Encoding"] != nil
                && Self.errorCode(response.body)?.code == ErrorCode.malformedJSON.rawValue:
                // A server that does not inflate push bodies (or a transport that dropped the header):
                // send this one and the next ones plain.
                compressesPushes = false
            case 429 where rateLimited < configuration.rateLimitRetries,
                503 where rateLimited < configuration.rateLimitRetries && response.headers["retry-after"] != nil:
                // The server (or a proxy before it) says when it will accept the request: wait that
                // long, never less (protocol.md §17.3), and say so meanwhile (§17.4).
                rateLimited += 1
                let seconds = min(max(response.headers["retry-after"].flatMap { Int($0) } ?? 1, 1), 3600)
                lastError = Self.rejection(response)
                publishStatus(
                    state: .refused, error: .some(lastError),
                    nextAttemptAt: physicalNow().addingTimeInterval(TimeInterval(seconds)))
                try await sleep(.seconds(seconds))
            default:
                if rateLimited > 0, response.status < 400 {
                    // The refusal the waits reported is over: this request was answered.
                    lastError = nil
                    publishStatus(connected: true, error: .some(nil))
                }
                return (response, sent)
            }
        }
    }

    /// The credential to send: the configuration's token, or one from its provider.
    func currentToken() async throws -> String {
        if let token { return token }
        guard let provider = configuration.tokenProvider else { return configuration.token }
        do {
            let fresh = try await provider()
            token = fresh
            return fresh
        } catch {
            throw SyncClientError.unreachable("could not get a token from the token provider: \(error)")
        }
    }

    /// The clock correction a server answer calls for: the server's time less the midpoint of the
    /// request's round trip (taken as the server's reading time), when it differs from the current
    /// correction by more than a second (or `force`); `nil` when it does not, or the server's time is
    /// outside what an HLC can carry (nonsense, never a reason to trap).
    func clockCorrection(serverTime: Int64, sent: Date, force: Bool = false) -> Int64? {
        let received = physicalNow()
        let midpoint = Int64((sent.timeIntervalSince1970 + received.timeIntervalSince1970) / 2 * 1000)
        guard (0...Int64(HLC.maxMilliseconds)).contains(serverTime) else { return nil }
        let offset = serverTime - midpoint
        return force || abs(offset - replica.clockOffset) > 1000 ? offset : nil
    }

    func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try Self.decode(type, data)
    }

    func decode<T: ChangePage>(_ type: T.Type, _ data: Data) throws -> T {
        try Self.decode(type, data)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try answer { try JSONCoding.decode(T.self, from: data) }
    }

    /// A page through ``JSONCoding``'s reader for pages.
    static func decode<T: ChangePage>(_ type: T.Type, _ data: Data) throws -> T {
        try answer { try JSONCoding.decode(T.self, from: data) }
    }

    /// A server answer that does not decode is a transport failure.
    private static func answer<T>(_ decode: () throws -> T) throws -> T {
        do {
            return try decode()
        } catch {
            throw SyncClientError.transport("unexpected response from the server: \(error)")
        }
    }

    static func errorCode(_ data: Data) -> ErrorBody.Detail? {
        (try? JSONCoding.decode(ErrorBody.self, from: data))?.error
    }

    /// A `401` other than an expired token's: the credential is refused — or, with
    /// `account_erased`, the account is gone for good (``SyncClientError/endsSync``).
    static func refusedToken(_ response: SyncHTTPResponse) -> SyncClientError {
        refusedToken(response.body)
    }

    static func refusedToken(_ body: Data) -> SyncClientError {
        let detail = errorCode(body)
        if detail?.code == ErrorCode.accountErased.rawValue {
            return .rejected(status: 401, code: ErrorCode.accountErased.rawValue, message: detail?.message ?? "")
        }
        return .unauthorized(detail?.message ?? "401")
    }

    static func rejection(_ response: SyncHTTPResponse) -> SyncClientError {
        let detail = Self.errorCode(response.body)
        return .rejected(
            status: response.status, code: detail?.code ?? "unknown",
            message: detail?.message ?? String(decoding: response.body.prefix(200), as: UTF8.self))
    }
}
