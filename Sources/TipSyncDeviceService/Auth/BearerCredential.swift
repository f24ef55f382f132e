package import Hummingbird
import TipSyncNetworking
import TipSyncServerBasics
import TipSyncStorage

/// The token of an `Authorization: Bearer <token>` header (the scheme is case-insensitive).
package struct BearerCredential {
    package var token: String

    package init?(_ request: Request) {
        self.init(request.headers)
    }

    init?(_ headers: HTTPFields) {
        guard let header = headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        token = String(parts[1].trimmingHTTPWhitespace)
    }
}
