import Foundation
import NIOCore

/// How many SwiftNIO event loops a server process runs: one on a machine with two cores or fewer,
/// else SwiftNIO's default (one per core), and whatever `NIO_SINGLETON_GROUP_LOOP_COUNT` says when
/// it is set.
///
/// On two cores the loops share them with SQLite's writer thread and Swift's task pool: with two
/// loops, a single-change push cost 51–66 µs of CPU, with one 44–59 µs, interleaved (docs/benchmark-history.md,
/// thirteenth round); a loop that stays busy sleeps and wakes less often. The fleet benchmark cost
/// the same or less, and its memory 20 MiB less; a change delivered to 1,002 live streams cost up to
/// 15% more, still a third of its target.
package enum EventLoopCount {
    /// The count to ask SwiftNIO for; `nil` leaves its default.
    package static func suggested(coreCount: Int, environment: [String: String]) -> Int? {
        guard environment["NIO_SINGLETON_GROUP_LOOP_COUNT"] == nil, coreCount <= 2 else { return nil }
        return 1
    }

    /// Sets SwiftNIO's singleton loop count for this process, once (later calls do nothing). Call it
    /// first thing, before anything uses SwiftNIO's singletons: SwiftNIO stops a process that sets
    /// the count after that.
    package static func apply() { _ = applied }

    private static let applied: Void = {
        if let count = suggested(coreCount: System.coreCount, environment: ProcessInfo.processInfo.environment) {
            NIOSingletons.groupLoopCountSuggestion = count
        }
    }()
}
