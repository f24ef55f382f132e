import CZlib
package import NIOCore
import Synchronization

/// Compresses response bodies (``ContentCoding``) with the system's zlib, keeping each stream and
/// its output buffer for the next response instead of setting up and tearing down a new one.
///
/// A cold start's pull page is about 700 KB of JSON: a new stream allocated zlib's state (about
/// 270 KB) and an output buffer as large as the page for every page, and glibc handed both back to
/// the system when freed, so every page faulted them in and zeroed them afresh — a sixth of the
/// server's time on a page (docs/benchmark-history.md). A kept stream is reset (`deflateReset`), writes into its
/// kept buffer, and the answer is a copy of just the compressed bytes. The body's parts are
/// compressed one after another, so a page need not be joined into one buffer first.
///
/// ``forgetIdle()`` frees the kept streams (a memory release after a burst). Responses use ``shared``.
package final class ResponseDeflater: Sendable {
    package static let shared = ResponseDeflater()

    /// zlib's fastest level: on pull pages (JSON with repeated keys and names) it compresses to
    /// about 20% more bytes than the default level in about half the CPU time (docs/benchmark-history.md).
    package static let level: Int32 = 1

    /// At most this many idle streams are kept (more compress at once only in a burst of large
    /// answers on many threads; those streams are ended after use).
    package let keptStreams: Int

    package init(keptStreams: Int = 8) {
        self.keptStreams = keptStreams
    }

    deinit { forgetIdle() }

    /// The bytes of `parts`, in order, compressed as one stream; nil if zlib refuses (out of memory).
    package func compress(_ parts: [ByteBuffer], format: ZlibFormat) -> ByteBuffer? {
        guard var stream = idle.withLock({ $0[format]?.popLast() }) ?? Stream(format: format) else { return nil }
        let compressed = stream.compress(parts)
        stream.reset()
        let kept = idle.withLock { idle -> Stream? in
            guard idle.values.reduce(0, { $0 + $1.count }) < keptStreams else { return stream }
            idle[format, default: []].append(stream)
            return nil
        }
        kept?.end()
        return compressed
    }

    /// Frees every idle stream and its buffer.
    package func forgetIdle() {
        let streams = idle.withLock { idle in
            defer { idle = [:] }
            return idle.values.flatMap { $0 }
        }
        for stream in streams { stream.end() }
    }

    /// How many idle streams are kept (for tests).
    package var idleCount: Int { idle.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    private let idle = Mutex<[ZlibFormat: [Stream]]>([:])

    /// One zlib deflate stream and the buffer it writes into. Used by one response at a time: taken
    /// from ``idle`` under its lock and put back after, so never shared between threads at once.
    private struct Stream: @unchecked Sendable {
        package let state: UnsafeMutablePointer<z_stream>
        package var output = ByteBuffer()

        package init?(format: ZlibFormat) {
            state = .allocate(capacity: 1)
            state.initialize(to: z_stream())
            guard
                deflateInit2_(
                    state, ResponseDeflater.level, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY,
                    zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
            else {
                state.deallocate()
                return nil
            }
        }

        /// Compresses the parts as one stream and ends it; the compressed bytes, copied out.
        package mutating func compress(_ parts: [ByteBuffer]) -> ByteBuffer? {
            let state = self.state
            let total = parts.reduce(0) { $0 + $1.readableBytes }
            output.clear()
            // Room for everything at once (zlib's bound), so each part is one call in practice.
            output.reserveCapacity(Int(deflateBound(state, uLong(total))))
            for (index, part) in parts.enumerated() {
                let finish = index == parts.count - 1
                guard finish || part.readableBytes > 0 else { continue }
                let done = part.withUnsafeReadableBytes { input -> Bool in
                    state.pointee.next_in = UnsafeMutablePointer(
                        mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                    state.pointee.avail_in = uInt(input.count)
                    var status = Z_OK
                    repeat {
                        if output.writableBytes == 0 { output.reserveCapacity(output.capacity * 2) }
                        output.writeWithUnsafeMutableBytes(minimumWritableBytes: 0) { room in
                            state.pointee.next_out = room.baseAddress?.assumingMemoryBound(to: Bytef.self)
                            state.pointee.avail_out = uInt(room.count)
                            status = deflate(state, finish ? Z_FINISH : Z_NO_FLUSH)
                            return room.count - Int(state.pointee.avail_out)
                        }
                    } while status == Z_OK && (finish || state.pointee.avail_in > 0)
                    return finish ? status == Z_STREAM_END : status == Z_OK
                }
                guard done else { return nil }
            }
            var compressed = ByteBuffer()
            compressed.reserveCapacity(output.readableBytes)
            compressed.writeImmutableBuffer(output)
            return compressed
        }

        package func reset() { deflateReset(state) }

        package func end() {
            deflateEnd(state)
            state.deallocate()
        }
    }
}
