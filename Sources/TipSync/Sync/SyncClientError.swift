import TipSyncCore

/// Why a sync round did not complete.
public enum SyncClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server did not answer (unreachable, timed out, connection dropped).
    case unreachable(String)
    /// The token was refused: sync stops until it is replaced.
    case unauthorized(String)
    /// The server rejected a request; `code` is the protocol error code.
    case rejected(status: Int, code: String, message: String)
    case invalidServerURL(String)
    case transport(String)
    /// The server's catalog does not validate: not applied (``SyncClient/catalogError``); syncing goes on.
    case invalidCatalog(String)

    public var description: String {
        switch self {
        case .unreachable(let why): "sync server unreachable: \(why)"
        case .unauthorized(let message): "sync token refused: \(message)"
        case .rejected(let status, let code, let message):
            "sync server refused the request (\(status) \(code)): \(message)"
        case .invalidServerURL(let url): "invalid sync server URL '\(url)'"
        case .transport(let why): "sync transport error: \(why)"
        case .invalidCatalog(let why): "server catalog not applied: \(why)"
        }
    }

    /// Retrying later may succeed. That includes `token_expired` right after a refresh (the token
    /// provider is asked again after the backoff), and `clock_skew` after the client has already corrected
    /// its clock: changes it must keep under far-future stamps go through once the server's clock
    /// reaches them (`protocol.md`, section 10).
    public var isTransient: Bool {
        switch self {
        case .unreachable, .transport: true
        case .rejected(let status, let code, _):
            status >= 500 || status == 429 || code == ErrorCode.clockSkew.rawValue
                || code == ErrorCode.tokenExpired.rawValue
        case .unauthorized, .invalidServerURL, .invalidCatalog: false
        }
    }
}
