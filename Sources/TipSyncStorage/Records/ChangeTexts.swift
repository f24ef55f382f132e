package import NIOCore
import TipSyncServerBasics

/// Consecutive log entries' stored canonical JSON, joined with commas: the inside of a page's
/// `changes` array, which answers write as it is (a pull, a live stream's page). Kept as one buffer,
/// not a string per change: a cold start's page holds 5,000 of them, and making, copying and freeing a
/// string for each cost a tenth of the server's work on the page.
package struct ChangeTexts: Sendable, Hashable {
    /// The texts, separated by `,`.
    package private(set) var joined = ByteBuffer()
    /// Where each text ends in ``joined``.
    private var ends: [Int] = []

    package init() {}

    /// The texts of `bodies`, in order.
    package init(_ bodies: [String]) {
        joined.reserveCapacity(bodies.reduce(0) { $0 + $1.utf8.count + 1 })
        ends.reserveCapacity(bodies.count)
        for body in bodies {
            if !ends.isEmpty { joined.writeInteger(UInt8(ascii: ",")) }
            joined.writeString(body)
            ends.append(joined.writerIndex)
        }
    }

    /// Appends one entry's text (UTF-8, as stored).
    package mutating func append(_ text: UnsafeRawBufferPointer) {
        if !ends.isEmpty { joined.writeInteger(UInt8(ascii: ",")) }
        joined.writeBytes(text)
        ends.append(joined.writerIndex)
    }

    /// Appends one entry's text (UTF-8, as stored).
    package mutating func append(_ text: ByteBuffer) {
        if !ends.isEmpty { joined.writeInteger(UInt8(ascii: ",")) }
        joined.writeImmutableBuffer(text)
        ends.append(joined.writerIndex)
    }

    /// The most bytes of change texts a page holds (512 KiB) besides its count limit: a page stops
    /// before the change that would take it past this, though it always holds at least one change.
    /// Every page a server hands over (a pull's answer, a live stream's event) waits whole in memory
    /// until the client has read it, so this bounds what one slow or non-reading client can pin
    /// (protocol.md §8 and §12; issue 59, item 2).
    package static let maxPageBytes = 512 * 1024

    /// Whether a page holding these texts has room for one more of `bytes` bytes, within `limit`
    /// changes and ``maxPageBytes`` — the one rule every backend's page follows.
    package func admits(_ bytes: Int, limit: Int) -> Bool {
        count < limit && (isEmpty || joined.readableBytes + 1 + bytes <= Self.maxPageBytes)
    }

    package var count: Int { ends.count }
    package var isEmpty: Bool { ends.isEmpty }

    /// Each text as a string, in order (for readers that decode the entries one by one).
    package var bodies: [String] {
        var start = 0
        return ends.map { end in
            defer { start = end + 1 }
            return joined.getString(at: start, length: end - start) ?? ""
        }
    }
}
