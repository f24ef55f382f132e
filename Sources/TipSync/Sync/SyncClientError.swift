import TipSyncCore

/// Why a sync round did not complete.
public enum SyncClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server did not answer (unreachable, timed out, connection dropped).
    case unreachable(String)
    /// The credential was refused (`401`): ``SyncClient/run()`` asks its token provider again and
    /// retries with backoff — a server on the wrong database or a revoked-then-reissued token heals
    /// without touching the device.
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

    /// The failure in the protocol's words: the server's error code (`unauthorized`,
    /// `server_error`…), or `unreachable`, `transport`, `invalid_server_url`, `invalid_catalog`.
    public var code: String {
        switch self {
        case .unreachable: "unreachable"
        case .unauthorized: ErrorCode.unauthorized.rawValue
        case .rejected(_, let code, _): code
        case .invalidServerURL: "invalid_server_url"
        case .transport: "transport"
        case .invalidCatalog: "invalid_catalog"
        }
    }

    /// The answer can never change, so ``SyncClient/run()`` ends (protocol.md §17.3): the account
    /// was erased (`account_erased`: syncing on would upload what its owner had erased), or the
    /// configured server address is not one a request can be sent to. Nothing else ends a device's
    /// sync: every other failure is retried with backoff, forever.
    public var endsSync: Bool {
        switch self {
        case .invalidServerURL: true
        case .rejected(_, let code, _): code == ErrorCode.accountErased.rawValue
        case .unreachable, .unauthorized, .transport, .invalidCatalog: false
        }
    }

    /// Whether ``SyncClient/run()`` tries again: every failure that does not ``endsSync``.
    public var isTransient: Bool { !endsSync }

    /// The server answered (a refusal), as opposed to no answer at all.
    public var isRefusal: Bool {
        switch self {
        case .unauthorized, .rejected: true
        case .unreachable, .transport, .invalidServerURL, .invalidCatalog: false
        }
    }

    /// A refusal of the credential itself (`401` or `403`): the token provider is asked again
    /// before the next attempt.
    var refusesCredential: Bool {
        switch self {
        case .unauthorized: true
        case .rejected(let status, _, _): status == 401 || status == 403
        default: false
        }
    }
}
