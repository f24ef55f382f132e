#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`). Every connection holds a descriptor, so the
/// common default soft limit (1024) lets a few hundred idle sockets make the server unreachable.
package enum FileDescriptorLimit {
    /// The soft and hard limits now.
    package static func current() -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// Raises the soft limit to the hard limit (what `tipsync-server serve` does at start). Returns
    /// the soft limit before and after; after equals before when the raise was refused.
    @discardableResult
    package static func raiseSoftLimitToHardLimit() -> (before: UInt64, after: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0, 0) }
        let before = UInt64(limit.rlim_cur)
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            #if canImport(Darwin)
                // macOS refuses a soft limit above OPEN_MAX unless the hard limit is finite and lower.
                raised.rlim_cur = min(raised.rlim_cur, rlim_t(OPEN_MAX) * 8)
            #endif
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised)
        }
        let now = current()
        return (before, now.soft, now.hard)
    }

    /// Descriptors open in this process now, or `nil` where that cannot be read (`/proc/self/fd`).
    package static func openCount() -> Int? {
        #if os(Linux)
            guard let directory = opendir("/proc/self/fd") else { return nil }
            defer { closedir(directory) }
            var count = -1  // the directory's own descriptor
            while let entry = readdir(directory) {
                let first = entry.pointee.d_name.0
                if first != UInt8(ascii: ".") { count += 1 }
            }
            return max(0, count)
        #else
            return nil
        #endif
    }
}
