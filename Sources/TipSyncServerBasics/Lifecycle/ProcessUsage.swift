package import CoreMetrics
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the server process uses of the machine, read from `/proc/self/stat` when `/metrics` is
/// scraped, under the names Prometheus's own client libraries use, so existing dashboards work:
/// `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
/// `process_start_time_seconds` (open files are `tipsync_open_files`, ``OpenFilesMonitor``).
package struct ProcessUsage: Sendable, Equatable {
    /// User and system CPU time used so far.
    package var cpuSeconds: Double
    package var residentBytes: Int64
    package var virtualBytes: Int64
    /// When the process started, in seconds since 1970.
    package var startTime: Double

    /// The figures now; `nil` where `/proc` is not there (not Linux).
    package static func now() -> ProcessUsage? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8)
        else { return nil }
        return parse(
            stat: stat, systemStat: system, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))),
            pageSize: Int64(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// The figures in `/proc/self/stat`'s text (proc(5)): after the command name in parentheses,
    /// which may hold spaces, field 14 `utime` and 15 `stime` in clock ticks, 22 `starttime` in ticks
    /// after boot (`btime` in `/proc/stat`), 23 `vsize` in bytes and 24 `rss` in pages.
    package static func parse(stat: String, systemStat: String, ticksPerSecond: Double, pageSize: Int64)
        -> ProcessUsage?
    {
        guard let close = stat.lastIndex(of: ")"), ticksPerSecond > 0 else { return nil }
        // Fields from the third (state) on: index 0 is field 3.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Double? { fields.count > number - 3 ? Double(fields[number - 3]) : nil }
        guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23),
            let resident = field(24),
            let bootLine = systemStat.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let boot = Double(bootLine.dropFirst("btime ".count))
        else { return nil }
        return ProcessUsage(
            cpuSeconds: (user + system) / ticksPerSecond, residentBytes: Int64(resident) * pageSize,
            virtualBytes: Int64(virtual), startTime: boot + start / ticksPerSecond)
    }

    /// The gauges these figures are recorded in.
    package struct Gauges: Sendable {
        package let cpu: CoreMetrics.Gauge
        package let resident: CoreMetrics.Gauge
        package let virtual: CoreMetrics.Gauge
        package let start: CoreMetrics.Gauge

        package init(factory: any MetricsFactory) {
            cpu = Gauge(label: "process_cpu_seconds_total", factory: factory)
            resident = Gauge(label: "process_resident_memory_bytes", factory: factory)
            virtual = Gauge(label: "process_virtual_memory_bytes", factory: factory)
            start = Gauge(label: "process_start_time_seconds", factory: factory)
        }

        /// Records the figures now (what `/metrics` does before it answers).
        package func record() {
            guard let usage = ProcessUsage.now() else { return }
            cpu.record(usage.cpuSeconds)
            resident.record(usage.residentBytes)
            virtual.record(usage.virtualBytes)
            start.record(usage.startTime)
        }
    }
}
