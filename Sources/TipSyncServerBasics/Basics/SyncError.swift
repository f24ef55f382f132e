package import Foundation
package import Hummingbird
package import TipSyncCore

/// Every error the sync API answers with: an HTTP status, a protocol error code and a message that
/// says what to do. Rendered as `{"error": {"code": …, "message": …, "serverTime": …}}`.
package struct SyncError: Error, Sendable, CustomStringConvertible {
    package let status: HTTPResponse.Status
    package let code: ErrorCode
    package let message: String
    package var expectedSeq: Int64?
    /// With `clock_skew`: the highest sequence number the server already holds from this device.
    package var highestSeq: Int64?
    /// With `clock_skew`: the database's cursor generation.
    package var generation: String?
    /// With `method_not_allowed`: the `Allow` header's value.
    package var allow: String?
    /// With `rate_limited`: seconds until the request would be accepted (`Retry-After`).
    package var retryAfter: Int?
    /// With `invalid_change`: the refused change's index in the push, and the member at fault
    /// (``TipSyncCore/ErrorBody/Detail/change``, ``TipSyncCore/ErrorBody/Detail/field``).
    package var change: Int?
    package var field: String?

    package init(
        _ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String, expectedSeq: Int64? = nil,
        highestSeq: Int64? = nil, generation: String? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.expectedSeq = expectedSeq
        self.highestSeq = highestSeq
        self.generation = generation
    }

    package var description: String { "\(code.rawValue): \(message)" }

    package static func unauthorized(_ message: String) -> SyncError { .init(.unauthorized, .unauthorized, message) }
    package static func tokenExpired(_ message: String) -> SyncError { .init(.unauthorized, .tokenExpired, message) }
    /// `401 account_erased`: the answer that ends a device's sync (protocol.md §6, §17.3).
    package static func accountErased(_ message: String) -> SyncError {
        .init(.unauthorized, .accountErased, message)
    }
    package static func rateLimited(_ message: String, retryAfter: Int) -> SyncError {
        var error = SyncError(.tooManyRequests, .rateLimited, message)
        error.retryAfter = retryAfter
        return error
    }
    /// `429 rate_limited` for a device past one of its budgets (requests, changes, body bytes):
    /// "this device sends more than 20 requests a second; retry after 3 s".
    package static func overBudget(_ verb: String, _ perSecond: Double, _ units: String, wait: Int) -> SyncError {
        rateLimited(
            "this device \(verb) more than \(perSecond.formatted()) \(units) a second; retry after \(wait) s",
            retryAfter: wait)
    }
    package static func notFound(_ message: String) -> SyncError { .init(.notFound, .notFound, message) }
    package static func csrfFailed(_ message: String) -> SyncError { .init(.forbidden, .csrfFailed, message) }
    package static func malformedJSON(_ message: String) -> SyncError { .init(.badRequest, .malformedJSON, message) }
    /// `422 invalid_change`. The message starts with the field in protocol terms (`changes[3].hlc:
    /// …`, `changes[2]: …`, `body: …`); the structured `change` and `field` are read from that one
    /// start, so the text and the structure never disagree. A refusal no one change is to blame for
    /// (the batch's numbering) clears `change` after.
    package static func invalidChange(_ message: String) -> SyncError {
        var error = SyncError(.unprocessableContent, .invalidChange, message)
        if let match = message.firstMatch(of: /^changes\[(\d+)\](?:\.([^:]+))?:/) {
            error.change = Int(match.1)
            error.field = match.2.map(String.init)
        }
        return error
    }
    package static func invalidCursor(_ message: String) -> SyncError { .init(.badRequest, .invalidCursor, message) }
    package static func invalidParameter(_ message: String) -> SyncError {
        .init(.badRequest, .invalidParameter, message)
    }
    package static func bodyTooLarge(_ limit: Int) -> SyncError {
        .init(
            .contentTooLarge, .bodyTooLarge,
            "request body is larger than the server's limit of \(limit) bytes; push smaller batches")
    }
    package static func batchTooLarge(_ count: Int, limit: Int) -> SyncError {
        .init(
            .contentTooLarge, .batchTooLarge, "a push carries \(count) changes; the limit is \(limit): split the batch")
    }
    package static func methodNotAllowed(_ method: String, allow: [String]) -> SyncError {
        var error = SyncError(
            .methodNotAllowed, .methodNotAllowed,
            "this route answers \(allow.joined(separator: ", ")), not \(method)")
        error.allow = allow.joined(separator: ", ")
        return error
    }
    package static func unsupportedMediaType(_ contentType: String?) -> SyncError {
        .init(
            .unsupportedMediaType, .unsupportedMediaType,
            "send the body as 'Content-Type: application/json'"
                + (contentType.map { ", not '\($0.prefix(100))'" } ?? " (the header is missing)"))
    }
    package static func unsupportedEncoding(_ encoding: String) -> SyncError {
        .init(
            .unsupportedMediaType, .unsupportedMediaType,
            "Content-Encoding '\(encoding.prefix(40))' is not supported; send gzip, deflate or none")
    }
    package static func deviceMismatch(_ message: String) -> SyncError { .init(.forbidden, .deviceMismatch, message) }
    package static func sequenceGap(expected: Int64, got: Int64) -> SyncError {
        .init(
            .conflict, .sequenceGap,
            "expected sequence number \(expected) from this device, got \(got); push again starting at \(expected)",
            expectedSeq: expected)
    }
    /// Milliseconds as seconds, exact to the millisecond: 300.5 s ahead is not "300 s" when the
    /// limit is 300 s.
    package static func seconds(_ milliseconds: Int64) -> String {
        let remainder = abs(milliseconds % 1000)
        guard remainder != 0 else { return String(milliseconds / 1000) }
        let digits = String(remainder)
        let fraction = String(repeating: "0", count: 3 - digits.count) + digits
        return "\(milliseconds / 1000).\(fraction.replacing(/0+$/, with: ""))"
    }

    package static func clockSkew(hlc: HLC, serverTime: Int64, bound: Int64, highestSeq: Int64, generation: String)
        -> SyncError
    {
        let ahead = Int64(hlc.milliseconds) - serverTime
        return .init(
            .unprocessableContent, .clockSkew,
            "a change is stamped \(seconds(ahead)) s ahead of the server's clock (limit \(seconds(bound)) s): "
                + "correct the device clock by the serverTime in this response, treat changes up to highestSeq as "
                + "acknowledged, re-stamp the rest and push again",
            highestSeq: highestSeq, generation: generation)
    }
}

extension SyncError: HTTPResponseError {
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        // Only reached if thrown outside the router's ErrorMiddleware, which renders it with the injected clock.
        response(serverTime: Int64(Date().timeIntervalSince1970 * 1000))
    }

    /// The one rendering of every error the server answers (protocol.md §10): the JSON error body
    /// with every field this error carries, `Allow` and `Retry-After` when it has them.
    package func response(serverTime: Int64) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if let allow { headers[.allow] = allow }
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(
            status: status, headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: bodyBytes(serverTime: serverTime))))
    }

    /// The JSON error body's bytes (the connection layer writes the same ``ErrorBody`` for what it
    /// refuses below the router).
    package func bodyBytes(serverTime: Int64) -> Data {
        ErrorBody(
            error: .init(
                code: code.rawValue, message: message, serverTime: serverTime, expectedSeq: expectedSeq,
                highestSeq: highestSeq, generation: generation, change: change, field: field)
        ).bytes
    }

    /// Any error as the protocol's: a ``SyncError`` as is; Hummingbird's own (unknown route, body too
    /// large) by status; anything else is `500 server_error`.
    package init(_ error: any Error) {
        switch error {
        case let error as SyncError:
            self = error
        case let error as any HTTPResponseError:
            let code: ErrorCode
            switch error.status {
            case .notFound: code = .notFound
            case .contentTooLarge: code = .bodyTooLarge
            case .unauthorized: code = .unauthorized
            case .badRequest: code = .malformedJSON
            default: code = error.status.code >= 500 ? .serverError : .invalidParameter
            }
            self.init(error.status, code, (error as? HTTPError)?.body ?? "\(error.status.reasonPhrase)")
        default:
            self.init(.internalServerError, .serverError, "internal error; retry with backoff")
        }
    }
}
