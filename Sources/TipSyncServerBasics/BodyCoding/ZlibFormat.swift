/// The two zlib-made codings HTTP bodies come in here (protocol.md section 5), as zlib's
/// `windowBits` selects them: compressed responses (``ResponseDeflater``) and compressed push
/// bodies (``StrictInflater``).
package enum ZlibFormat: Sendable, Hashable {
    /// RFC 1952 (`Content-Encoding: gzip`): one member.
    case gzip
    /// RFC 1950 (`Content-Encoding: deflate`, as HTTP means it): a zlib stream.
    case zlib

    /// zlib's `windowBits` for the format, with its largest window.
    package var windowBits: Int32 {
        switch self {
        case .gzip: 15 + 16
        case .zlib: 15
        }
    }
}
