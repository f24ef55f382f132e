import CZlib
package import NIOCore

/// Inflates a compressed request body whole or not at all, with the system's zlib: the stream must
/// end (its trailer present, its checksum and length right) exactly where the body ends, and its
/// output may reach `limit` bytes and not one more — the same limit plain bodies have. compress-nio,
/// used for responses, accepts a stream without its trailer or with bytes after it, and checks its
/// size only between chunks.
package enum StrictInflater {
    package enum Failure: Error, Equatable {
        /// The output would exceed the limit.
        case tooLarge
        /// Not a complete, valid stream of that format, or bytes follow its end.
        case malformed(String)
    }

    package static func inflate(_ body: ByteBuffer, format: ZlibFormat, limit: Int) throws(Failure) -> ByteBuffer {
        var stream = z_stream()
        guard inflateInit2_(&stream, format.windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { throw .malformed("zlib could not start") }
        defer { inflateEnd(&stream) }
        let input = Array(body.readableBytesView)
        // One byte more than the limit: producing it is how "too large" is known, exactly.
        var output = [UInt8](repeating: 0, count: min(limit + 1, max(64 * 1024, input.count * 4)))
        var produced = 0
        var status: Int32 = Z_OK
        var consumed = 0
        input.withUnsafeBufferPointer { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = uInt(source.count)
            while true {
                if produced == output.count {
                    guard output.count <= limit else { break }
                    output += [UInt8](repeating: 0, count: min(output.count, limit + 1 - output.count))
                }
                let room = output.count - produced
                status = output.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress! + produced
                    stream.avail_out = uInt(room)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                produced = output.count - Int(stream.avail_out)
                if status != Z_OK { break }
                // No progress possible: the input ended before the stream did.
                if stream.avail_in == 0, stream.avail_out > 0 { break }
            }
            consumed = source.count - Int(stream.avail_in)
        }
        if produced > limit { throw .tooLarge }
        guard status == Z_STREAM_END else {
            throw .malformed(status == Z_DATA_ERROR ? "corrupt data or checksum" : "the stream ends early (truncated)")
        }
        guard consumed == input.count else {
            throw .malformed("\(input.count - consumed) bytes follow the stream's end")
        }
        return ByteBuffer(bytes: output[0..<produced])
    }
}
