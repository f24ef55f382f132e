import TipSyncServerBasics
import TipSyncStorage

/// Comparing a secret a client sent with the one the server holds, in a time that does not depend on
/// where they first differ (the console's CSRF token, the metrics token).
package enum ConstantTime {
    package static func equal(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
