import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// Token buckets per key: each key (a device, a client address) may spend `perSecond` units a second
/// on average and `burst` at once. The server keeps one per device for requests and one for pushed
/// changes (``ServerConfiguration/requestRate``, ``ServerConfiguration/changeRate``), and one per
/// client address for failed sign-ins (``ServerConfiguration/failedSignInRate``). Time is the
/// server's injected clock, so tests never wait.
package final class RateLimiter<Key: Hashable & Sendable>: Sendable {
    /// A rate: `perSecond` on average, `burst` at most at once. `perSecond == 0` means no limit.
    struct Bucket {
        var tokens: Double
        var updated: Int64
    }

    let rate: RateLimit
    private let buckets = Mutex<(byDevice: [Key: Bucket], takes: Int)>(([:], 0))
    /// Every this many takes, buckets that have refilled completely are forgotten (a full bucket is
    /// what a device never seen before gets), so memory follows the devices active recently.
    static var sweepEvery: Int { 4096 }

    package init(_ rate: RateLimit) {
        self.rate = rate
    }

    /// Spends `cost` units of `device`'s bucket at `now` (milliseconds). Returns `nil` when allowed,
    /// else the whole seconds to wait before the same request would be allowed (at least 1).
    package func take(_ device: Key, cost: Double = 1, now: Int64) -> Int? {
        guard rate.isLimited else { return nil }
        return buckets.withLock { state in
            state.takes += 1
            if state.takes % Self.sweepEvery == 0 { sweep(&state.byDevice, now: now) }
            var bucket = state.byDevice[device] ?? Bucket(tokens: rate.burst, updated: now)
            bucket.tokens = refilled(bucket, now: now)
            bucket.updated = max(bucket.updated, now)
            // A cost above the burst could never be paid: it is charged as a full bucket.
            let charge = min(cost, rate.burst)
            guard bucket.tokens >= charge else {
                state.byDevice[device] = bucket
                return max(1, Int(((charge - bucket.tokens) / rate.perSecond).rounded(.up)))
            }
            bucket.tokens -= charge
            state.byDevice[device] = bucket
            return nil
        }
    }

    /// Spends `cost` units whatever the bucket holds — work already done is paid for — down to
    /// `-burst` at most. Returns `nil` while the bucket is not in debt, else the whole seconds until
    /// it is out of it (at least 1); ``wait(_:now:)`` then refuses the key's next request before any
    /// work is done for it.
    package func spend(_ key: Key, cost: Double, now: Int64) -> Int? {
        guard rate.isLimited else { return nil }
        return buckets.withLock { state in
            state.takes += 1
            if state.takes % Self.sweepEvery == 0 { sweep(&state.byDevice, now: now) }
            var bucket = state.byDevice[key] ?? Bucket(tokens: rate.burst, updated: now)
            bucket.tokens = max(-rate.burst, refilled(bucket, now: now) - min(cost, rate.burst))
            bucket.updated = max(bucket.updated, now)
            state.byDevice[key] = bucket
            return bucket.tokens >= 0 ? nil : max(1, Int((-bucket.tokens / rate.perSecond).rounded(.up)))
        }
    }

    /// Whether no key has spent anything lately (no bucket is held: ``wait(_:now:)`` is `nil` for all).
    var isEmpty: Bool {
        buckets.withLock { $0.byDevice.isEmpty }
    }

    /// The whole seconds until `key` could spend one unit, without spending it; `nil` when it can now.
    package func wait(_ key: Key, now: Int64) -> Int? {
        guard rate.isLimited else { return nil }
        return buckets.withLock { state in
            guard let bucket = state.byDevice[key] else { return nil }
            let tokens = refilled(bucket, now: now)
            return tokens >= 1 ? nil : max(1, Int(((1 - tokens) / rate.perSecond).rounded(.up)))
        }
    }

    /// Forgets the buckets that have refilled completely by `now` (the devices that went quiet):
    /// called every ``sweepEvery`` takes, and when the server releases memory after traffic.
    package func forgetRefilled(now: Int64) {
        buckets.withLock { sweep(&$0.byDevice, now: now) }
    }

    private func sweep(_ byDevice: inout [Key: Bucket], now: Int64) {
        byDevice = byDevice.filter { refilled($0.value, now: now) < rate.burst }
    }

    private func refilled(_ bucket: Bucket, now: Int64) -> Double {
        // A clock that steps back refills nothing (never a negative amount).
        let elapsed = Double(max(0, now.subtractingReportingOverflow(bucket.updated).partialValue)) / 1000
        return min(rate.burst, bucket.tokens + elapsed * rate.perSecond)
    }

    /// Devices with a bucket (tests, metrics).
    package var trackedDevices: Int { buckets.withLock { $0.byDevice.count } }
}

/// A token-bucket rate: `perSecond` on average and up to `burst` at once; `perSecond == 0`: unlimited.
package struct RateLimit: Sendable, Hashable {
    package var perSecond: Double
    package var burst: Double

    package init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = burst
    }

    package static let unlimited = RateLimit(perSecond: 0, burst: 0)
    var isLimited: Bool { perSecond > 0 && burst > 0 }
}
