import CoreFoundation  // timespec's members: with MemberImportVisibility, a clean build finds them there
import Foundation

/// Timing samples and their summary.
struct Measurement {
    var samples: [Duration] = []

    mutating func time(_ body: () throws -> Void) rethrows {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        samples.append(clock.now - start)
    }

    func percentile(_ p: Double) -> Duration {
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    var mean: Duration { samples.reduce(.zero, +) / samples.count }
}

extension Duration {
    var milliseconds: Double { Double(components.seconds) * 1e3 + Double(components.attoseconds) / 1e15 }
    var microseconds: Double { milliseconds * 1e3 }
}

func format(_ value: Double, _ digits: Int = 3) -> String {
    let scale = pow10(digits)
    return String(Double((value * scale).rounded()) / scale)
}

private func pow10(_ n: Int) -> Double { (0..<n).reduce(1) { value, _ in value * 10 } }

/// With `TIPSYNC_BENCH_MARKS` set, writes `label` and the monotonic clock's seconds to standard error:
/// the timed window of a run under `perf record -k CLOCK_MONOTONIC` (whose sample times use that
/// clock), for `perf report --time START,END`.
func markProfileWindow(_ label: String) {
    guard ProcessInfo.processInfo.environment["TIPSYNC_BENCH_MARKS"] != nil else { return }
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    FileHandle.standardError.write(Data("\(label) \(now.tv_sec).\(String(format: "%09ld", now.tv_nsec))\n".utf8))
}
