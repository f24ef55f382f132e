package import CZlib
package import NIOCore

/// Bytes compressed once and sent many times inside compressed answers: a raw DEFLATE stream
/// (RFC 1951) of non-final blocks that ends on a byte boundary (zlib's `Z_SYNC_FLUSH`), with the
/// checksums of what it holds. Such a segment can stand anywhere inside a gzip or zlib stream
/// (``ContentCoding/json(_:for:)``'s spliced form): it refers to nothing before it, and the
/// answer's checksum is combined from the segment's (zlib's `crc32_combine`, `adler32_combine`), so
/// the bytes are never compressed again. A kept page of an account's state (``KeptStatePage``) is one.
package struct DeflatedSegment: Sendable, Hashable {
    /// The raw DEFLATE blocks.
    package var bytes: ByteBuffer
    /// How many bytes they inflate to.
    package var length: Int
    /// CRC-32 of the inflated bytes (gzip's checksum).
    package var crc32: UInt32
    /// Adler-32 of the inflated bytes (zlib's checksum).
    package var adler32: UInt32

    package init(bytes: ByteBuffer, length: Int, crc32: UInt32, adler32: UInt32) {
        self.bytes = bytes
        self.length = length
        self.crc32 = crc32
        self.adler32 = adler32
    }

    /// zlib's default level: a segment is compressed once (in the background, after a compaction)
    /// and sent to every new device, so its bytes matter more than the CPU spent making them.
    package static let level: Int32 = Z_DEFAULT_COMPRESSION

    /// `input` compressed as a segment; nil if zlib refuses (out of memory).
    package init?(compressing input: ByteBuffer) {
        guard let (bytes, length) = Self.deflate(input, level: Self.level) else { return nil }
        self.init(
            bytes: bytes, length: length, crc32: Self.checksum(input, CZlib.crc32, initial: 0),
            adler32: Self.checksum(input, CZlib.adler32, initial: 1))
    }

    /// `input` as raw DEFLATE blocks ending on a byte boundary, none of them final.
    package static func deflate(_ input: ByteBuffer, level: Int32) -> (ByteBuffer, Int)? {
        let state = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        state.initialize(to: z_stream())
        defer { state.deallocate() }
        // Negative window bits: raw DEFLATE, no header or trailer of its own.
        guard
            deflateInit2_(
                state, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
                == Z_OK
        else { return nil }
        defer { deflateEnd(state) }
        var output = ByteBuffer()
        // The bound for the whole input, and the sync flush's few bytes.
        output.reserveCapacity(Int(deflateBound(state, uLong(input.readableBytes))) + 16)
        let done = input.withUnsafeReadableBytes { raw -> Bool in
            state.pointee.next_in = UnsafeMutablePointer(mutating: raw.baseAddress?.assumingMemoryBound(to: Bytef.self))
            state.pointee.avail_in = uInt(raw.count)
            var status = Z_OK
            repeat {
                if output.writableBytes < 16 { output.reserveCapacity(output.capacity * 2) }
                output.writeWithUnsafeMutableBytes(minimumWritableBytes: 0) { room in
                    state.pointee.next_out = room.baseAddress?.assumingMemoryBound(to: Bytef.self)
                    state.pointee.avail_out = uInt(room.count)
                    status = CZlib.deflate(state, Z_SYNC_FLUSH)
                    return room.count - Int(state.pointee.avail_out)
                }
                // Flushed when zlib left room in the output: everything it had is out.
            } while status == Z_OK && (state.pointee.avail_in > 0 || state.pointee.avail_out == 0)
            return status == Z_OK || status == Z_BUF_ERROR
        }
        return done ? (output, input.readableBytes) : nil
    }

    /// zlib's `crc32` or `adler32` of `input`, continuing `initial`.
    package static func checksum(
        _ input: ByteBuffer, _ function: (uLong, UnsafePointer<Bytef>?, uInt) -> uLong, initial: uLong
    ) -> UInt32 {
        input.withUnsafeReadableBytes { raw in
            UInt32(
                truncatingIfNeeded: function(
                    initial, raw.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(raw.count)))
        }
    }
}
