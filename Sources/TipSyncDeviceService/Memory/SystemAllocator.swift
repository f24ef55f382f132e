import Foundation
import TipSyncServerBasics
import TipSyncStorage

#if canImport(Glibc)
    import Glibc
#endif

/// The process's `malloc`, seen from the server: which allocator serves it, what it holds, and giving
/// back what is free.
///
/// `tipsync-server` links mimalloc on Linux (Package.swift): glibc's `malloc` kept the pages a
/// first launch of 18,000 devices freed, pinned by the streams' long-lived objects among them
/// (BENCHMARKS.md, "mimalloc instead of glibc's malloc"). Whatever serves `malloc` — mimalloc
/// linked or preloaded, glibc's, another preloaded — is found at run time, so the same code runs in
/// the server, in the tests and in the benchmarks.
package enum SystemAllocator {
    /// The allocator serving this process's `malloc`: `"mimalloc 2.0.9"` when mimalloc's `malloc`
    /// answers (a pointer it hands out is in mimalloc's heap), else `"glibc"` where glibc's
    /// `malloc_info` is there to call, else `"unknown"`.
    package static let name: String = {
        if let version = mimalloc?.version {
            return "mimalloc \(version / 100).\(version / 10 % 10).\(version % 10)"
        }
        return symbol("malloc_info") == nil ? "unknown" : "glibc"
    }()

    /// Returns free memory to the system: mimalloc's `mi_collect(true)` (the calling thread's heap;
    /// mimalloc hands the other threads' free pages back on its own schedule — collecting on each
    /// event loop and on the main thread as well measured the same), or glibc's `malloc_trim(0)`
    /// (the free pages of every heap arena); nothing elsewhere.
    ///
    /// An allocator keeps what a burst of connections freed, to reuse it; nothing is lost by
    /// returning it but the time to fault pages in again on the next burst.
    package static func trim() {
        if let mimalloc {
            mimalloc.collect(true)
            return
        }
        // `malloc_trim` is declared in <malloc.h>, which the Glibc module does not export.
        if let trim = symbol("malloc_trim") {
            _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
        }
    }

    /// What glibc's `malloc` holds, from `malloc_info`: bytes handed out and not yet freed (the
    /// live heap) and bytes its arenas hold from the system (live plus free chunks not yet given
    /// back); `nil` where glibc's `malloc` does not serve the process (mimalloc, another preloaded
    /// allocator) or elsewhere. Resident memory above the live heap is the allocator's, not a leak.
    package static func heapStatistics() -> HeapStatistics? {
        #if canImport(Glibc)
            guard mimalloc == nil, let mallocInfo = symbol("malloc_info") else { return nil }
            typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
            var buffer: UnsafeMutablePointer<CChar>? = nil
            var size = 0
            guard let stream = open_memstream(&buffer, &size) else { return nil }
            let status = unsafeBitCast(mallocInfo, to: MallocInfo.self)(0, stream)
            fclose(stream)
            defer { free(buffer) }
            guard status == 0, let buffer else { return nil }
            return HeapStatistics(mallocInfo: String(cString: buffer))
        #else
            return nil
        #endif
    }

    /// mimalloc's entry points when its `malloc` serves the process; `nil` when it is not loaded,
    /// or loaded without taking `malloc` over.
    private static let mimalloc: Mimalloc? = Mimalloc()

    private struct Mimalloc: Sendable {
        let version: Int
        let collect: @convention(c) (Bool) -> Void

        init?() {
            guard let version = SystemAllocator.symbol("mi_version"),
                let collect = SystemAllocator.symbol("mi_collect"),
                let inHeap = SystemAllocator.symbol("mi_is_in_heap_region")
            else { return nil }
            let isInHeap = unsafeBitCast(inHeap, to: (@convention(c) (UnsafeRawPointer?) -> Bool).self)
            guard let probe = malloc(64) else { return nil }
            defer { free(probe) }
            guard isInHeap(probe) else { return nil }
            self.version = Int(unsafeBitCast(version, to: (@convention(c) () -> Int32).self)())
            self.collect = unsafeBitCast(collect, to: (@convention(c) (Bool) -> Void).self)
        }
    }

    /// A function the process has loaded, by name.
    private static func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        #if canImport(Glibc)
            dlsym(dlopen(nil, RTLD_NOW), name)
        #else
            nil
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
