import Foundation

/// Bookkeeping times the stores record on their own (when an account or token was created, when a
/// log was compacted): milliseconds since 1970 by the machine's clock. Times that decide anything
/// (revocations, erasures, last seen) are passed in by the caller's injected clock instead.
package enum WallClock {
    package static func milliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
