import CoreMetrics
import Hummingbird
import NIOCore
import NIOPosix
import TipSyncServerBasics
import TipSyncStorage

/// How long one write of a live stream may wait for its client to read, and what ends the
/// connection then (`--live-stall-timeout`).
package struct StallBound: Sendable {
    var timeout: Duration
    var closeConnection: @Sendable () -> Void
}

/// A live stream's writer whose every write must finish within the stall bound: a write waits while
/// the client does not read (the page stays in memory meanwhile), so one that has not finished in
/// time closes the connection, which fails the write and ends the stream. What one stream can hold
/// in memory is then about one page (``ChangeTexts/maxPageBytes``), for at most that long. Only
/// socket writes are timed, never the store reads between them.
struct StallBoundWriter: ResponseBodyWriter {
    var inner: any ResponseBodyWriter
    let stall: StallBound
    /// `tipsync_live_streams_stalled_total`.
    let stalled: CoreMetrics.Counter

    mutating func write(_ buffer: ByteBuffer) async throws {
        // A shared loop, not the connection's: that one may be a test's embedded loop.
        let timer = NIOSingletons.posixEventLoopGroup.any().scheduleTask(
            in: .nanoseconds(stall.timeout.wholeNanoseconds)
        ) { [stall, stalled] in
            stalled.increment()
            stall.closeConnection()
        }
        defer { timer.cancel() }
        try await inner.write(buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await inner.finish(trailingHeaders)
    }
}
