import Synchronization

/// A clock tests move by hand.
package final class ManualServerClock: Sendable {
    private let milliseconds: Mutex<Int64>
    package init(_ start: Int64) { milliseconds = Mutex(start) }
    package var now: Int64 { milliseconds.withLock { $0 } }
    package func advance(by delta: Int64) { milliseconds.withLock { $0 += delta } }
}
