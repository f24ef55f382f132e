package import Hummingbird
package import NIOCore
package import Synchronization

/// A response body that keeps what is written.
package struct RecordingWriter: ResponseBodyWriter {
    package final class Box: Sendable {
        package let written = Mutex<[String]>([])
    }
    package let box = Box()

    package init() {}

    package mutating func write(_ buffer: ByteBuffer) async throws {
        box.written.withLock { $0.append(String(buffer: buffer)) }
    }

    package consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
