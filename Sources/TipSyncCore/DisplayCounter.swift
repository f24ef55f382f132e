/// One device's displays of one tip within one display epoch: a grow-only counter.
///
/// A device only ever sends its own cumulative totals, so merging takes the per-field maximum, and a
/// tip's display count is the sum over devices of the counters in the tip's current epoch. Counters
/// therefore add up across devices and are never lost or doubled by retries or reordering.
public struct DisplayCounter: Sendable, Hashable {
    public struct Key: Sendable, Hashable {
        public var device: String
        /// The reset (`resetEligibility` or `resetDatastore`) that began this epoch; `nil` before any.
        public var epoch: Stamp?

        public init(device: String, epoch: Stamp?) {
            self.device = device
            self.epoch = epoch
        }

        /// Devices are distinct by code points: `é` and `e` + U+0301 are two devices, each with its counter.
        public static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.epoch == rhs.epoch && lhs.device.utf8.elementsEqual(rhs.device.utf8)
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(epoch)
            hasher.combine(device.utf8.count)
            var device = device  // contiguous UTF-8: hashed as one run of bytes
            device.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    public var count: Int64
    /// Cumulative seconds on screen.
    public var duration: Double
    /// Milliseconds since 1970 of the latest display.
    public var lastDisplayed: Int64

    public init(count: Int64, duration: Double, lastDisplayed: Int64) {
        self.count = count
        self.duration = duration
        self.lastDisplayed = lastDisplayed
    }

    /// Per-field maximum: idempotent, commutative and associative.
    public static func merge(_ current: DisplayCounter?, _ incoming: DisplayCounter) -> DisplayCounter {
        guard let current else { return incoming }
        return DisplayCounter(
            count: max(current.count, incoming.count),
            duration: max(current.duration, incoming.duration),
            lastDisplayed: max(current.lastDisplayed, incoming.lastDisplayed))
    }
}

/// Orders optional epochs: no epoch (never reset) comes before every reset.
func epochPrecedes(_ lhs: Stamp?, _ rhs: Stamp?) -> Bool {
    switch (lhs, rhs) {
    case (nil, nil): false
    case (nil, _): true
    case (_, nil): false
    case (let lhs?, let rhs?): lhs < rhs
    }
}

func laterEpoch(_ lhs: Stamp?, _ rhs: Stamp?) -> Stamp? {
    epochPrecedes(lhs, rhs) ? rhs : lhs
}
