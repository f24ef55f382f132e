import Foundation
import TipSyncServerBasics
import TipSyncStorage

/// glibc's heap at one moment (``SystemAllocator/heapStatistics()``).
package struct HeapStatistics: Sendable, Equatable {
    /// Bytes allocated and not freed.
    package var inUse: Int
    /// Bytes the allocator holds from the system: ``inUse`` plus free chunks it keeps.
    package var held: Int

    package init(inUse: Int, held: Int) {
        self.inUse = inUse
        self.held = held
    }

    /// Reads the process-wide totals that follow the last `</heap>` of `malloc_info`'s XML.
    init?(mallocInfo xml: String) {
        guard let totals = xml.range(of: "</heap>", options: .backwards).map({ xml[$0.upperBound...] })
        else { return nil }
        func size(_ element: String, _ type: String) -> Int? {
            guard let start = totals.range(of: "<\(element) type=\"\(type)\"") else { return nil }
            let rest = totals[start.upperBound...]
            guard let open = rest.range(of: "size=\"") else { return nil }
            return Int(rest[open.upperBound...].prefix { $0.isNumber })
        }
        guard let fast = size("total", "fast"), let free = size("total", "rest"),
            let mapped = size("total", "mmap"), let current = size("system", "current")
        else { return nil }
        // Nothing held: another allocator (a preloaded jemalloc) serves `malloc`.
        guard current + mapped > 0 else { return nil }
        inUse = current - fast - free + mapped
        held = current + mapped
    }
}
