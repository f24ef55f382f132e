/// How long a client waits before trying the server again (protocol.md §17.3): "full jitter" — each
/// delay drawn uniformly from zero to a ceiling that doubles with every failure in a row — so that
/// the devices an instance loses together (a restart, a crash, a deploy) come back spread over the
/// ceiling instead of in the same instant. The ceiling is never above what the device has already
/// waited in this row of failures (or the base): a device is back within about as long as the
/// outage lasted once the server returns — within 5 s after a 5 s outage — where doubling alone
/// could wait up to twice the outage (issue 72: the web page took 13.7 s after a 5 s outage).
///
/// A pure value: the draw is given, so tests and simulations choose it.
public struct Backoff: Sendable, Hashable {
    /// Seconds: the first failure's ceiling, and the range a stream the server ended is reopened in.
    public var base: Double
    /// Seconds: no ceiling is higher.
    public var maximum: Double

    public init(base: Double = 1, maximum: Double = 60) {
        self.base = base
        self.maximum = maximum
    }

    /// The ceiling after `failures` failures in a row before this one (0 for the first):
    /// `min(maximum, base × 2^failures)`.
    public func ceiling(afterFailures failures: Int) -> Double {
        let doublings = min(max(failures, 0), 62)
        return min(maximum, base * Double(UInt64(1) << UInt64(doublings)))
    }

    /// The ceiling after `failures` failures in a row, having waited `waited` seconds in all since
    /// the first of them: `min(maximum, base × 2^failures, max(base, waited))`.
    public func ceiling(afterFailures failures: Int, waited: Double) -> Double {
        min(ceiling(afterFailures: failures), max(base, waited.isNaN ? 0 : waited))
    }

    /// The delay after `failures` failures in a row: `draw` (in `0...1`, uniform) of the ceiling.
    /// `waited`: the seconds already waited since the first of them (the delays drawn before this one).
    public func delay(afterFailures failures: Int, waited: Double = .infinity, draw: Double) -> Double {
        Self.clamped(draw) * ceiling(afterFailures: failures, waited: waited)
    }

    /// The delay before reopening a live stream that began and then ended without a failure (the
    /// server restarted or closed it): `draw` of ``base``.
    public func delayAfterStreamEnded(draw: Double) -> Double {
        Self.clamped(draw) * min(base, maximum)
    }

    private static func clamped(_ draw: Double) -> Double {
        draw.isNaN ? 1 : min(max(draw, 0), 1)
    }
}
