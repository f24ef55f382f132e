import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The C library's `malloc`, seen from the server: what it holds and giving back what is free.
public enum SystemAllocator {
    /// Returns the free pages of every heap arena to the system (`malloc_trim(0)`); glibc only,
    /// nothing elsewhere (jemalloc, preloaded, hands memory back on its own schedule).
    ///
    /// glibc's `malloc` keeps what a burst of connections freed, to reuse it; nothing is lost by
    /// trimming but the time to fault pages in again on the next burst.
    public static func trim() {
        #if canImport(Glibc)
            // `malloc_trim` is declared in <malloc.h>, which the Glibc module does not export.
            if let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") {
                _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
            }
        #endif
    }

    /// Has glibc's `malloc` keep large freed blocks for reuse rather than hand them back at once;
    /// call once at startup (`tipsync-server serve` does). glibc only; nothing elsewhere, nor when the
    /// environment sets either threshold itself (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`,
    /// or `glibc.malloc.mmap_threshold` / `trim_threshold` in `GLIBC_TUNABLES`): the operator's
    /// choice stands. (Other tunables, such as the deployment's `arena_max`, combine with it.)
    ///
    /// By default glibc maps each block over 128 KB afresh and unmaps it when freed, and gives back an
    /// arena's free top past about the same size: a pull page's buffers (the page, zlib's state and
    /// its output, about 2 MB) were faulted in and zeroed again for every page, a quarter of the
    /// server's time on a cold start's page (BENCHMARKS.md). Here blocks up to 4 MB come from the
    /// arenas and up to 8 MB of an arena's free top stays for the next page. Nothing is held for
    /// good: ``MemoryRelease`` still returns every free page after a burst (``trim()``).
    ///
    /// - Returns: whether it changed glibc's settings.
    @discardableResult
    public static func keepLargeBlocksForReuse(environment: [String: String]) -> Bool {
        #if canImport(Glibc)
            let tunables = environment["GLIBC_TUNABLES"] ?? ""
            guard environment["MALLOC_MMAP_THRESHOLD_"] == nil, environment["MALLOC_TRIM_THRESHOLD_"] == nil,
                !tunables.contains("glibc.malloc.mmap_threshold"), !tunables.contains("glibc.malloc.trim_threshold")
            else { return false }
            // `mallopt` is declared in <malloc.h>, which the Glibc module does not export.
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") else { return false }
            let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
            let trimThreshold: Int32 = -1  // M_TRIM_THRESHOLD
            let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD (setting it also stops glibc adjusting it)
            // mallopt answers 1 on success.
            return mallopt(mmapThreshold, 4 << 20) == 1 && mallopt(trimThreshold, 8 << 20) == 1
        #else
            return false
        #endif
    }

    /// What glibc's `malloc` holds, from `malloc_info`: bytes handed out and not yet freed (the
    /// live heap) and bytes its arenas hold from the system (live plus free chunks not yet given
    /// back); `nil` elsewhere, and where another allocator is preloaded. Resident memory above the
    /// live heap is the allocator's, not a leak.
    public static func heapStatistics() -> HeapStatistics? {
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
    public static func residentBytes(_ field: String = "VmRSS") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return 0 }
        return (Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "0") ?? 0) * 1024
    }
}
