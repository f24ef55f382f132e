/// A hybrid logical clock (Kulkarni et al. 2014) as a pure value: the caller supplies physical time.
///
/// Stamps it issues strictly increase, stay within the clock-sync uncertainty of physical time, and
/// are larger than every stamp it has observed, so a causally later event always gets a larger stamp.
public struct HybridLogicalClock: Sendable, Hashable {
    /// The last stamp issued or observed.
    public private(set) var last: HLC

    public init(last: HLC = .zero) {
        self.last = last
    }

    /// Issues a stamp for a local event at physical time `physicalMilliseconds`.
    public mutating func tick(physicalMilliseconds: UInt64) -> HLC {
        let physical = min(physicalMilliseconds, HLC.maxMilliseconds)
        if physical > last.milliseconds {
            last = HLC(milliseconds: physical, counter: 0)
        } else if last.counter == .max {
            // At the end of time (2^48 - 1 ms) the clock stays put rather than trap.
            guard last.milliseconds < HLC.maxMilliseconds else { return last }
            last = HLC(milliseconds: last.milliseconds + 1, counter: 0)
        } else {
            last = HLC(milliseconds: last.milliseconds, counter: last.counter + 1)
        }
        return last
    }

    /// Merges a stamp received from another node, so later local stamps exceed it.
    public mutating func observe(_ remote: HLC, physicalMilliseconds: UInt64) {
        let physical = min(physicalMilliseconds, HLC.maxMilliseconds)
        let top = max(last.milliseconds, remote.milliseconds, physical)
        let counter: UInt32
        if top == last.milliseconds && top == remote.milliseconds {
            counter = UInt32(max(last.counter, remote.counter)) + 1
        } else if top == last.milliseconds {
            counter = UInt32(last.counter) + 1
        } else if top == remote.milliseconds {
            counter = UInt32(remote.counter) + 1
        } else {
            counter = 0
        }
        if counter <= UInt32(UInt16.max) {
            last = HLC(milliseconds: top, counter: UInt16(counter))
        } else if top < HLC.maxMilliseconds {
            last = HLC(milliseconds: top + 1, counter: 0)
        } else {
            // A remote stamp at the end of time (`ffffffffffff-ffff`): saturate rather than trap.
            last = HLC(milliseconds: top, counter: .max)
        }
    }
}
