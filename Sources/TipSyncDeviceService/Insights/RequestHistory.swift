import Hummingbird
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

/// Pushes, pulls and errors per minute over the last 24 hours on this instance, for the console's
/// sparklines. 1,440 buckets of three counters, whatever the traffic.
package final class RequestHistory: Sendable {
    package init() {}

    package struct Minute: Sendable {
        var minute: Int64 = -1
        package var pushes = 0
        package var pulls = 0
        package var errors = 0
    }

    static let minutes = 1440
    private let buckets = Mutex([Minute](repeating: Minute(), count: RequestHistory.minutes))

    enum Kind { case push, pull, other }

    func record(_ kind: Kind, failed: Bool, at milliseconds: Int64) {
        let minute = milliseconds / 60_000
        let index = Int(((minute % Int64(Self.minutes)) + Int64(Self.minutes)) % Int64(Self.minutes))
        buckets.withLock { buckets in
            if buckets[index].minute != minute { buckets[index] = Minute(minute: minute) }
            switch kind {
            case .push: buckets[index].pushes += 1
            case .pull: buckets[index].pulls += 1
            case .other: break
            }
            if failed { buckets[index].errors += 1 }
        }
    }

    /// The last 1,440 minutes up to `now`, oldest first (minutes without traffic are zero).
    package func series(now milliseconds: Int64) -> [Minute] {
        let current = milliseconds / 60_000
        return buckets.withLock { buckets in
            (0..<Int64(Self.minutes)).reversed().map { back in
                let minute = current - back
                let index = Int(((minute % Int64(Self.minutes)) + Int64(Self.minutes)) % Int64(Self.minutes))
                return buckets[index].minute == minute ? buckets[index] : Minute(minute: minute)
            }
        }
    }
}
