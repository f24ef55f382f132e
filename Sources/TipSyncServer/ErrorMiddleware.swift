import Hummingbird
import TipSyncCore

/// Turns every error into the protocol's JSON error body, so clients parse one shape for all 4xx/5xx,
/// including Hummingbird's own (unknown route, body too large).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The server clock (milliseconds since 1970) reported as `serverTime`: the same one push checks skew against.
    let now: @Sendable () -> Int64

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as SyncError {
            return ErrorResponse.make(
                status: error.status, code: error.code, message: error.message, serverTime: now(),
                expectedSeq: error.expectedSeq, highestSeq: error.highestSeq, generation: error.generation,
                allow: error.allow, retryAfter: error.retryAfter)
        } catch let error as HTTPResponseError {
            let code: ErrorCode
            switch error.status {
            case .notFound: code = .notFound
            case .contentTooLarge: code = .bodyTooLarge
            case .unauthorized: code = .unauthorized
            case .badRequest: code = .malformedJSON
            default: code = error.status.code >= 500 ? .serverError : .invalidParameter
            }
            let message = (error as? HTTPError)?.body ?? "\(error.status.reasonPhrase)"
            return ErrorResponse.make(status: error.status, code: code, message: message, serverTime: now())
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            return ErrorResponse.make(
                status: .internalServerError, code: .serverError, message: "internal error; retry with backoff",
                serverTime: now())
        }
    }
}
