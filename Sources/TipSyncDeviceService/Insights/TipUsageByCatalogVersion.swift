import TipSyncCore
import TipSyncServerBasics
package import TipSyncStorage

/// One tip's figures split by the catalog version in force when they happened, so an operator sees
/// whether a rule change made a tip more used or more closed: an account's first display counts for
/// the version current at that moment, its close or action for the version current when it was
/// written. Before any catalog was uploaded: version 0.
package struct TipUsageByCatalogVersion: Sendable, Hashable {
    package struct Row: Sendable, Hashable {
        package var version: Int64
        /// Accounts whose first display fell in this version.
        package var displayed = 0
        package var closed = 0
        package var used = 0
    }

    /// By version, newest first; versions with nothing to count are left out.
    package var rows: [Row]

    /// - Parameters:
    ///   - usage: the tip's row in every account.
    ///   - versions: every catalog version (any order).
    package init(usage: [TipUsage], versions: [CatalogVersionRecord]) {
        let timeline = versions.map { ($0.uploadedAt, $0.version) }.sorted { $0 < $1 }
        func version(at time: Int64) -> Int64 { timeline.last { $0.0 <= time }?.1 ?? 0 }
        var byVersion: [Int64: Row] = [:]
        for account in usage {
            if let first = account.firstDisplayAt {
                byVersion[version(at: first), default: Row(version: version(at: first))].displayed += 1
            }
            if let at = account.invalidatedAt {
                let v = version(at: at)
                switch account.reason {
                case .tipClosed: byVersion[v, default: Row(version: v)].closed += 1
                case .actionPerformed: byVersion[v, default: Row(version: v)].used += 1
                default: break
                }
            }
        }
        rows = byVersion.values.sorted { $0.version > $1.version }
    }
}
