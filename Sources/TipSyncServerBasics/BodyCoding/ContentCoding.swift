package import Hummingbird
package import NIOCore
import TipSyncNetworking

/// HTTP content codings on `/v1` (protocol.md section 5): pull pages are sent `gzip` or `deflate`
/// compressed when the client's `Accept-Encoding` allows it and the page is at least
/// ``threshold`` bytes; a push body may arrive `Content-Encoding: gzip` or `deflate`. Optional for
/// clients: without those headers everything is plain JSON, as before.
package enum ContentCoding {
    /// Smaller bodies are sent as they are: compressing them saves less than the header costs.
    package static let threshold = 1024

    /// The coding to answer with: `gzip` if acceptable, else `deflate` (HTTP's "deflate" is zlib
    /// format), else none. `q=0` refuses a coding; `*` accepts any not named. Responses are
    /// compressed at zlib's fastest level (``ResponseDeflater``).
    package static func negotiate(_ header: String?) -> (name: String, format: ZlibFormat)? {
        guard let header else { return nil }
        var quality: [String: Double] = [:]
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingHTTPWhitespace.lowercased() }
            guard let name = parts.first, !name.isEmpty else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)) ?? 0
            }
            quality[name] = q
        }
        func accepts(_ name: String) -> Bool { (quality[name] ?? quality["*"] ?? 0) > 0 }
        if accepts("gzip") { return ("gzip", .gzip) }
        if accepts("deflate") { return ("deflate", .zlib) }
        return nil
    }

    /// Every JSON answer's headers, compressed or not: its type, and that it varies with `Accept-Encoding`.
    package static var jsonHeaders: HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.vary] = "Accept-Encoding"
        return headers
    }

    /// A JSON response, compressed when the request accepts it and the body is large enough.
    package static func json(_ text: String, for request: Request) -> Response {
        json(ByteBuffer(string: text), for: request)
    }

    /// A JSON response from its bytes, compressed when the request accepts it and the body is large enough.
    package static func json(_ bytes: ByteBuffer, for request: Request) -> Response {
        json(parts: [bytes], for: request)
    }

    /// A JSON response whose body is `parts` one after another (a pull page: its head, its changes
    /// as stored, its tail), compressed from the parts when the request accepts it and the body is
    /// large enough, else joined.
    package static func json(parts: [ByteBuffer], for request: Request) -> Response {
        var headers = jsonHeaders
        let length = parts.reduce(0) { $0 + $1.readableBytes }
        if length >= threshold, let (name, format) = negotiate(request.headers[.acceptEncoding]),
            let compressed = ResponseDeflater.shared.compress(parts, format: format)
        {
            headers[.contentEncoding] = name
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: compressed))
        }
        guard var body = parts.first else { return Response(status: .ok, headers: headers, body: .init()) }
        if parts.count > 1 {
            body = ByteBuffer()
            body.reserveCapacity(length)
            for part in parts { body.writeImmutableBuffer(part) }
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    /// A JSON response whose body is `parts`, some of them kept compressed (a pull page of an
    /// account's state, ``KeptStatePage``): spliced in `coding`, which the request accepts (the caller
    /// negotiated it before asking the store for kept pages), never compressed again.
    package static func json(parts: [BodyPart], coding: (name: String, format: ZlibFormat)) -> Response {
        var headers = jsonHeaders
        headers[.contentEncoding] = coding.name
        return Response(
            status: .ok, headers: headers, body: .init(byteBuffer: SplicedBody.make(parts, format: coding.format)))
    }

    /// A request body as sent: decoded when `Content-Encoding` is `gzip` or `deflate`, never to more
    /// than `limit` bytes (a small body that inflates enormously is refused like a large one), and
    /// only when the stream is whole: trailer present and right, nothing after it.
    package static func decode(_ body: ByteBuffer, encoding: String?, limit: Int) throws -> ByteBuffer {
        guard let encoding = encoding?.trimmingHTTPWhitespace.lowercased(), encoding != "identity"
        else { return body }
        let format: ZlibFormat
        switch encoding {
        case "gzip", "x-gzip": format = .gzip
        case "deflate": format = .zlib
        default:
            throw SyncError.unsupportedEncoding(encoding)
        }
        do {
            return try StrictInflater.inflate(body, format: format, limit: limit)
        } catch .tooLarge {
            throw SyncError.bodyTooLarge(limit)
        } catch .malformed(let why) {
            throw SyncError.malformedJSON("the body is not valid \(encoding) data: \(why)")
        }
    }
}
