package import Foundation
import Synchronization

/// The `Date` header's format (RFC 9110 §5.6.7, IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`), for the
/// responses written outside Hummingbird's connection task (``LiveConnection``).
package enum HTTPDate {
    /// The text of the current second, made once per second (as Hummingbird's date cache does).
    private static let latest = Mutex<(second: Int64, text: String)>((-1, ""))

    /// The header's text for `date`, from the text kept for its second when it is the latest.
    package static func cached(_ date: Date) -> String {
        let second = Int64(date.timeIntervalSince1970.rounded(.down))
        if let text = latest.withLock({ $0.second == second ? $0.text : nil }) { return text }
        let text = text(date)
        latest.withLock { if second > $0.second { $0 = (second, text) } }
        return text
    }

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    package static func text(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
