import NIOCore
import Testing
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Response bodies compressed with kept zlib streams: each answer is exactly its parts, one after
/// another, whatever the stream compressed before; the kept streams are bounded and freed on demand.
@Suite struct ResponseDeflaterTests {
    static func inflated(_ body: ByteBuffer, _ format: ZlibFormat) throws -> String {
        String(buffer: try StrictInflater.inflate(body, format: format, limit: 50_000_000))
    }

    /// A page-like text: JSON that repeats, about `count` × 60 bytes.
    static func text(_ count: Int, seed: Int) -> String {
        (0..<count).map { #"{"id":"d:\#($0 * seed)","kind":"donation","n":\#($0 % 7)}"# }.joined(separator: ",")
    }

    @Test(arguments: [ZlibFormat.gzip, .zlib])
    func partsComeOutAsOneBodyOnAStreamUsedBefore(format: ZlibFormat) throws {
        let cases: [[String]] = [
            ["{\"cursor\":\"c\",\"changes\":[", Self.text(20_000, seed: 3), "]}"],
            [Self.text(10, seed: 1)],
            ["", Self.text(100, seed: 2), "", "x"],
            ["a", ""],
            [""],
        ]
        let deflater = ResponseDeflater()
        // Twice over: the second time every answer comes from a stream that compressed another.
        for _ in 0..<2 {
            for parts in cases {
                let body = try #require(deflater.compress(parts.map { ByteBuffer(string: $0) }, format: format))
                #expect(try Self.inflated(body, format) == parts.joined())
            }
        }
    }

    @Test func keptStreamsAreBoundedAndForgotten() async throws {
        let deflater = ResponseDeflater(keptStreams: 4)
        #expect(deflater.idleCount == 0)
        _ = deflater.compress([ByteBuffer(string: Self.text(1000, seed: 5))], format: .gzip)
        _ = deflater.compress([ByteBuffer(string: Self.text(1000, seed: 6))], format: .gzip)
        #expect(deflater.idleCount == 1)
        // Many at once: at most `keptStreams` stay afterwards.
        await withTaskGroup(of: Void.self) { group in
            for seed in 0..<32 {
                group.addTask {
                    let text = Self.text(2000, seed: seed)
                    let body = deflater.compress([ByteBuffer(string: text)], format: .zlib)
                    #expect(body.flatMap { try? Self.inflated($0, .zlib) } == text)
                }
            }
        }
        #expect(deflater.idleCount >= 1 && deflater.idleCount <= 4)
        deflater.forgetIdle()
        #expect(deflater.idleCount == 0)
    }
}
