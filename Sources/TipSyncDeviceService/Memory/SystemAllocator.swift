import Foundation
import TipSyncServerBasics
import TipSyncStorage

#if canImport(Glibc)
    import Glibc
#endif

/// The C library's `malloc`, seen from the server: what it holds and giving back what is free.
package enum SystemAllocator {
    /// Returns the free pages of every heap arena to the system (`malloc_trim(0)`); glibc only,
    /// nothing elsewhere (jemalloc, preloaded, hands memory back on its own schedule).
    ///
    /// glibc's `malloc` keeps what a burst of connections freed, to reuse it; nothing is lost by
    /// trimming but the time to fault pages in again on the next burst.
    package static func trim() {
        #if canImport(Glibc)
            // `malloc_trim` is declared in <malloc.h>, which the Glibc module does not export.
            if let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") {
                _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
            }
        #endif
    }

    /// What glibc's `malloc` holds, from `malloc_info`: bytes handed out and not yet freed (the
    /// live heap) and bytes its arenas hold from the system (live plus free chunks not yet given
    /// back); `nil` elsewhere, and where another allocator is preloaded. Resident memory above the
    /// live heap is the allocator's, not a leak.
    package static func heapStatistics() -> HeapStatistics? {
        #if canImport(Glibc)
            typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_info") else { return nil }
            var buffer: UnsafeMutablePointer<CChar>? = nil
            var size = 0
            guard let stream = open_memstream(&buffer, &size) else { return nil }
            let status = unsafeBitCast(symbol, to: MallocInfo.self)(0, stream)
            fclose(stream)
            defer { free(buffer) }
            guard status == 0, let buffer else { return nil }
            return HeapStatistics(mallocInfo: String(cString: buffer))
        #else
            return nil
        #endif
    }

    /// The process's resident memory in bytes, all of it or one field of `/proc/self/status`
    /// (`"RssAnon"`, `"RssFile"`); 0 where there is no `/proc`.
    package static func residentBytes(_ field: String = "VmRSS") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return 0 }
        return (Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "0") ?? 0) * 1024
    }
}
