import CZlib
import Foundation

/// gzip (RFC 1952) with the system's zlib, for push bodies sent with `Content-Encoding: gzip`
/// (protocol.md section 5). The client only compresses; the server's pages are inflated by
/// URLSession, which asks for them compressed by itself.
enum Gzip {
    /// `data` compressed as one gzip member, or `nil` if zlib fails (the caller then sends it plain).
    /// Level 1, as the server uses for pages: nearly all of level 9's gain on change logs, at a
    /// fraction of the CPU.
    static func compress(_ data: Data, level: Int32 = 1) -> Data? {
        guard data.count < Int(UInt32.max) else { return nil }
        var stream = z_stream()
        // windowBits 15 + 16 asks for a gzip header and trailer instead of zlib's.
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(data.count)))
        var output = Data(count: bound)
        let status = data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int32 in
            output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) -> Int32 in
                stream.next_in = UnsafeMutablePointer(
                    mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.count = Int(stream.total_out)
        return output
    }
}
