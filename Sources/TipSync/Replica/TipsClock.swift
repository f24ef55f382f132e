public import Foundation
import Synchronization

/// Where a replica reads physical time. Inject a ``ManualClock`` in tests so nothing sleeps.
public struct TipsClock: Sendable {
    public var now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The system clock.
    public static let system = TipsClock { Date() }

    /// This clock shifted by `seconds` (a device whose clock is wrong, or the correction for one).
    public func offset(by seconds: TimeInterval) -> TipsClock {
        let base = now
        return TipsClock { base().addingTimeInterval(seconds) }
    }
}

/// A clock that moves only when told to.
public final class ManualClock: Sendable {
    private let current: Mutex<Date>

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }

    public var clock: TipsClock { TipsClock { [self] in self.now } }
}
