package import NIOCore

/// A part of a response body framed as one HTTP/1.1 chunk (`<size in hex>\r\n<bytes>\r\n`, RFC 9112
/// §7.1), ready for the socket. A live stream's page goes to every stream of its account at that
/// position: framed once when the page is made, its bytes are written as they are to each connection
/// (``LiveConnection``), below the response encoder, instead of each connection framing its own copy.
package enum HTTPChunk {
    /// `content` framed as one chunk (empty content: no bytes, since an empty chunk ends a body), and
    /// `content` again as a view of the framed bytes' storage (no second copy).
    package static func frame(_ content: ByteBuffer) -> (framed: ByteBuffer, content: ByteBuffer) {
        guard content.readableBytes > 0 else { return (ByteBuffer(), ByteBuffer()) }
        let size = String(content.readableBytes, radix: 16)
        var framed = ByteBuffer()
        framed.reserveCapacity(size.utf8.count + 4 + content.readableBytes)
        framed.writeString(size)
        framed.writeStaticString("\r\n")
        let start = framed.writerIndex
        framed.writeImmutableBuffer(content)
        framed.writeStaticString("\r\n")
        let view = framed.getSlice(at: start, length: content.readableBytes) ?? ByteBuffer()
        return (framed, view)
    }

    /// `content` framed as one chunk (empty content: no bytes).
    package static func framed(_ content: ByteBuffer) -> ByteBuffer { frame(content).framed }
}
