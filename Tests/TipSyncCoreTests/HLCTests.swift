import Testing
import TipSyncCore

@Suite struct HLCTests {
    @Test func wireFormRoundTripsAndSortsLikeTheValue() throws {
        let a = HLC(milliseconds: 1_700_000_000_000, counter: 7)
        #expect(a.description == "018bcfe56800-0007")
        #expect(HLC("018bcfe56800-0007") == a)
        #expect(HLC(rawValue: a.rawValue) == a)
        let b = HLC(milliseconds: 1_700_000_000_001, counter: 0)
        #expect(a < b && a.description < b.description)
        for bad in ["", "018bcfe56800-007", "018bcfe56800_0007", "018BCFE56800-0007", "zz8bcfe56800-0007"] {
            #expect(HLC(bad) == nil)
        }
    }

    @Test func tickIsStrictlyMonotonicEvenWhenPhysicalTimeGoesBack() {
        var clock = HybridLogicalClock()
        var last = clock.tick(physicalMilliseconds: 1000)
        for physical: UInt64 in [1000, 999, 500, 1000, 1001, 1001] {
            let next = clock.tick(physicalMilliseconds: physical)
            #expect(next > last)
            last = next
        }
        #expect(last == HLC(milliseconds: 1001, counter: 1))
    }

    @Test func observeMakesLaterStampsExceedRemoteOnes() {
        var clock = HybridLogicalClock()
        _ = clock.tick(physicalMilliseconds: 1000)
        let remote = HLC(milliseconds: 5000, counter: 3)
        clock.observe(remote, physicalMilliseconds: 1001)
        let next = clock.tick(physicalMilliseconds: 1002)
        #expect(next > remote)
        #expect(next == HLC(milliseconds: 5000, counter: 5))
        // Physical time catching up resets the counter.
        #expect(clock.tick(physicalMilliseconds: 6000) == HLC(milliseconds: 6000, counter: 0))
    }

    @Test func counterOverflowCarriesIntoMilliseconds() {
        var clock = HybridLogicalClock(last: HLC(milliseconds: 10, counter: .max))
        #expect(clock.tick(physicalMilliseconds: 10) == HLC(milliseconds: 11, counter: 0))
    }

    @Test func stampsBreakTiesByDevice() {
        let hlc = HLC(milliseconds: 1, counter: 0)
        #expect(Stamp(hlc: hlc, device: "a") < Stamp(hlc: hlc, device: "b"))
        #expect(Stamp(hlc: hlc, device: "z") < Stamp(hlc: HLC(milliseconds: 1, counter: 1), device: "a"))
    }
}
