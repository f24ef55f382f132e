import NIOCore
import Testing

@testable import TipSyncNetworking

/// ``HTTPChunk``: a body part framed once, as RFC 9112 §7.1 frames a chunk, its content a view of the
/// framed bytes.
@Suite struct HTTPChunkTests {
    @Test func aPartIsFramedWithItsSizeInHexAndItsContentIsAViewOfTheFramedBytes() {
        let content = ByteBuffer(string: String(repeating: "x", count: 300))
        let (framed, view) = HTTPChunk.frame(content)
        #expect(String(buffer: framed) == "12c\r\n" + String(repeating: "x", count: 300) + "\r\n")
        #expect(view == content)
        // The view shares the framed bytes' storage: a page kept for many streams is held once.
        #expect(
            view.withUnsafeReadableBytes { $0.baseAddress } == framed.withUnsafeReadableBytes { $0.baseAddress! + 5 })
    }

    @Test func emptyContentIsNoBytesSinceAnEmptyChunkEndsABody() {
        let (framed, view) = HTTPChunk.frame(ByteBuffer())
        #expect(framed.readableBytes == 0)
        #expect(view.readableBytes == 0)
        #expect(HTTPChunk.framed(ByteBuffer()).readableBytes == 0)
    }
}
