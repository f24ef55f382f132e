public import Foundation

/// The body of every 4xx/5xx response: `{"error": {"code": "…", "message": "…"}}`.
public struct ErrorBody: Sendable, Hashable, Codable {
    public struct Detail: Sendable, Hashable, Codable {
        /// Machine-readable; see ``ErrorCode``.
        public var code: String
        /// For people: says what was wrong and what to do.
        public var message: String
        /// The server's clock (milliseconds since 1970), on every error.
        public var serverTime: Int64?
        /// With `sequence_gap`: the sequence number the server expects next from this device.
        public var expectedSeq: Int64?
        /// With `clock_skew`: the highest sequence number the server already holds from this device
        /// (those changes are stored as they were; only later ones may be re-stamped).
        public var highestSeq: Int64?
        /// With `clock_skew`: the server's cursor generation (see ``PushResponse/generation``).
        public var generation: String?
        /// With `invalid_change` (revision 2.9): the index in the push's `changes` of the change
        /// refused — absent when no one change is to blame (the batch's numbering, a body that is not
        /// a push). What a client sets aside (protocol.md §17.2), read from the structure, not the text.
        public var change: Int?
        /// With `invalid_change`: the member of that change at fault, as a path within it (`hlc`,
        /// `value`, `lastDisplayed`, `seq`); absent when the change as a whole is (its size).
        public var field: String?

        public init(
            code: String, message: String, serverTime: Int64? = nil, expectedSeq: Int64? = nil,
            highestSeq: Int64? = nil, generation: String? = nil, change: Int? = nil, field: String? = nil
        ) {
            self.change = change
            self.field = field
            self.code = code
            self.message = message
            self.serverTime = serverTime
            self.expectedSeq = expectedSeq
            self.highestSeq = highestSeq
            self.generation = generation
        }
    }

    public var error: Detail

    public init(error: Detail) {
        self.error = error
    }

    /// The body as the server writes it (JSON; empty only if encoding failed, which it cannot).
    public var bytes: Data { (try? JSONCoding.encoder.encode(self)) ?? Data() }
}

/// Error codes of protocol v1 (`protocol.md`, "Errors").
public enum ErrorCode: String, Sendable, CaseIterable {
    case unauthorized
    /// A JWT whose `exp` has passed (status 401): get a fresh token and retry.
    case tokenExpired = "token_expired"
    /// The credential's account was erased after it was issued (status 401): the one answer that
    /// ends a device's sync (protocol.md §6, §17.3) — syncing on would upload what was erased.
    case accountErased = "account_erased"
    /// Too many requests or changes from this device (status 429, with `Retry-After`).
    case rateLimited = "rate_limited"
    case notFound = "not_found"
    case malformedJSON = "malformed_json"
    case invalidChange = "invalid_change"
    case invalidCursor = "invalid_cursor"
    case invalidParameter = "invalid_parameter"
    /// The request is not HTTP/1.1 the server can parse (status 400); the connection is closed.
    case malformedRequest = "malformed_request"
    /// The route exists but not for this method (status 405, with `Allow`).
    case methodNotAllowed = "method_not_allowed"
    /// A body that is not `application/json` (status 415).
    case unsupportedMediaType = "unsupported_media_type"
    case bodyTooLarge = "body_too_large"
    case batchTooLarge = "batch_too_large"
    case deviceMismatch = "device_mismatch"
    case sequenceGap = "sequence_gap"
    case clockSkew = "clock_skew"
    case serverError = "server_error"
    /// A console form posted without its session's CSRF token (status 403).
    case csrfFailed = "csrf_failed"
}
