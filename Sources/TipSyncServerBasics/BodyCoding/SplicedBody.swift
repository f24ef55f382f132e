import CZlib
package import NIOCore

/// One part of an answer's body: bytes as they are, or bytes kept compressed (``DeflatedSegment``).
package enum BodyPart: Sendable {
    case plain(ByteBuffer)
    case deflated(DeflatedSegment)

    /// How many bytes the part is in the body as sent uncompressed.
    package var length: Int {
        switch self {
        case .plain(let bytes): bytes.readableBytes
        case .deflated(let segment): segment.length
        }
    }
}

/// A gzip or zlib stream made of parts without compressing the kept ones again: the format's
/// header, each plain part as DEFLATE stored blocks (a page's head and tail: a few hundred bytes,
/// not worth a compressor's set-up), each segment's blocks as kept, an empty final block, and the
/// trailer with the checksum combined from the parts'. Any inflater reads it as one stream of the
/// parts' bytes in order (RFC 1951 lets blocks of any type follow one another; a segment ends on a
/// byte boundary and refers to nothing before it).
package enum SplicedBody {
    /// The stream; ``BodyPart/length`` of the parts added up is what it inflates to.
    package static func make(_ parts: [BodyPart], format: ZlibFormat) -> ByteBuffer {
        var out = ByteBuffer()
        out.reserveCapacity(
            parts.reduce(32) { total, part in
                switch part {
                case .plain(let bytes): total + bytes.readableBytes + 5 * (bytes.readableBytes / 65_535 + 1)
                case .deflated(let segment): total + segment.bytes.readableBytes
                }
            })
        switch format {
        // ID1 ID2, CM = 8 (deflate), no flags, no time, XFL 0, OS 255 (unknown).
        case .gzip: out.writeBytes([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255])
        // CMF (deflate, 32 KiB window), FLG (fastest level, check bits: 0x7801 % 31 == 0).
        case .zlib: out.writeBytes([0x78, 0x01])
        }
        var crc = UInt32(0)
        var adler = UInt32(1)
        var length = 0
        for part in parts {
            switch part {
            case .plain(let bytes):
                crc = DeflatedSegment.checksum(bytes, CZlib.crc32, initial: uLong(crc))
                adler = DeflatedSegment.checksum(bytes, CZlib.adler32, initial: uLong(adler))
                var rest = bytes
                repeat {
                    let chunk = rest.readSlice(length: min(rest.readableBytes, 65_535))!
                    // A stored block, not final: its header bits then padding to the byte (one zero
                    // byte), LEN and its one's complement, little-endian, then the bytes.
                    out.writeInteger(UInt8(0))
                    out.writeInteger(UInt16(chunk.readableBytes), endianness: .little)
                    out.writeInteger(~UInt16(chunk.readableBytes), endianness: .little)
                    out.writeImmutableBuffer(chunk)
                } while rest.readableBytes > 0
            case .deflated(let segment):
                crc = UInt32(truncatingIfNeeded: crc32_combine(uLong(crc), uLong(segment.crc32), .init(segment.length)))
                adler = UInt32(
                    truncatingIfNeeded: adler32_combine(uLong(adler), uLong(segment.adler32), .init(segment.length)))
                out.writeImmutableBuffer(segment.bytes)
            }
            length += part.length
        }
        // The final block: fixed Huffman codes holding only the end-of-block code.
        out.writeBytes([0x03, 0x00])
        switch format {
        case .gzip:
            out.writeInteger(crc, endianness: .little)
            out.writeInteger(UInt32(truncatingIfNeeded: length), endianness: .little)
        case .zlib:
            out.writeInteger(adler, endianness: .big)
        }
        return out
    }
}
