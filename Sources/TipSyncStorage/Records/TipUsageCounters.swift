import Foundation
import TipSyncCore

/// Per-tip totals kept by deltas: when an account's tip usage is replaced, its old rows' counters
/// are subtracted and the new rows' added, in the same transaction; an erasure subtracts. The tips
/// page then reads a few rows per tip instead of aggregating every account's.
package enum TipUsageCounters {
    /// Counter deltas, by tip and counter name, for replacing `old` rows with `new` ones.
    package static func deltas(replacing old: [TipUsage], with new: [TipUsage]) -> [TipCounterKey: Int64] {
        var deltas: [TipCounterKey: Int64] = [:]
        for row in old { for name in row.counters { deltas[TipCounterKey(tip: row.tip, name: name), default: 0] -= 1 } }
        for row in new { for name in row.counters { deltas[TipCounterKey(tip: row.tip, name: name), default: 0] += 1 } }
        return deltas.filter { $0.value != 0 }
    }

    /// The UTC day of a time in milliseconds, as `YYYY-MM-DD`.
    package static func day(_ milliseconds: Int64) -> String {
        let days = Int64((Double(milliseconds) / 86_400_000).rounded(.down))
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm): no calendar, no locale.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))"
    }

    /// 0, 1, 2–3, 4–7, 8 or more displays.
    package static func displayBucket(_ displays: Int64) -> Int {
        switch displays {
        case ...0: 0
        case 1: 1
        case 2...3: 2
        case 4...7: 3
        default: 4
        }
    }

    /// Quarter-octave buckets of milliseconds: bucket b holds [2^(b/4), 2^((b+1)/4)), so a median
    /// read from them is within 10% of the exact one.
    package static func durationBucket(_ milliseconds: Int64) -> Int {
        milliseconds < 1 ? 0 : Int((log2(Double(milliseconds)) * 4).rounded(.down)) + 1
    }

    /// The middle of a bucket (geometric), in milliseconds.
    package static func durationOfBucket(_ bucket: Int) -> Int64 {
        bucket == 0 ? 0 : Int64(pow(2, (Double(bucket - 1) + 0.5) / 4).rounded())
    }

    /// One tip's totals from its counters.
    package static func totals(tip: String, counters: [String: Int64]) -> TipUsageTotals {
        var invalidated: [InvalidationReason: Int] = [:]
        for reason in InvalidationReason.allCases {
            if let count = counters["reason:\(reason.rawValue)"], count > 0 { invalidated[reason] = Int(count) }
        }
        var durations: [(bucket: Int, count: Int64)] = counters.compactMap { name, count in
            guard name.hasPrefix("took:"), let bucket = Int(name.dropFirst(5)), count > 0 else { return nil }
            return (bucket, count)
        }
        durations.sort { $0.bucket < $1.bucket }
        var median: Int64?
        let total = durations.reduce(0) { $0 + $1.count }
        var seen: Int64 = 0
        for (bucket, count) in durations {
            seen += count
            if seen > total / 2 {
                median = durationOfBucket(bucket)
                break
            }
        }
        var daily: [String: TipUsageTotals.DailyCounts] = [:]
        for (name, count) in counters where name.hasPrefix("day:") && count > 0 {
            let parts = name.split(separator: ":")
            guard parts.count == 3 else { continue }
            let day = String(parts[2])
            switch parts[1] {
            case "displayed": daily[day, default: .init()].displayed = Int(count)
            case "closed": daily[day, default: .init()].closed = Int(count)
            case "used": daily[day, default: .init()].used = Int(count)
            default: break
            }
        }
        return TipUsageTotals(
            tip: tip, accounts: Int(counters["accounts"] ?? 0), displayedAccounts: Int(counters["displayed"] ?? 0),
            invalidated: invalidated, displayBuckets: (0..<5).map { Int(counters["displays:\($0)"] ?? 0) },
            medianMillisecondsToInvalidation: median, usedAfterSeeing: Int(counters["usedAfterSeeing"] ?? 0),
            daily: daily)
    }

    /// Totals of every tip with any account, by tip id, from `(tip, name, count)` rows.
    package static func totals(rows: [(tip: String, name: String, count: Int64)]) -> [TipUsageTotals] {
        var byTip: [String: [String: Int64]] = [:]
        for row in rows { byTip[row.tip, default: [:]][row.name] = row.count }
        return byTip.keys.sorted().compactMap { tip in
            let counters = byTip[tip]!
            return (counters["accounts"] ?? 0) > 0 ? totals(tip: tip, counters: counters) : nil
        }
    }
}

/// One counter of one tip.
package struct TipCounterKey: Hashable {
    package var tip: String
    package var name: String
}
