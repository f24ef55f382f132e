import Foundation
import Hummingbird
import NIOCore
import TipSyncCore
import TipSyncDeviceService
import TipSyncServerBasics
package import TipSyncStorage

/// `GET /admin/v1/catalog/versions`.
package struct CatalogVersionList: Encodable, Sendable {
    package struct Entry: Encodable, Sendable {
        package var version: Int64
        package var uploadedBy: String
        package var uploadedAt: Int64
        package var restoredFrom: Int64?
        package var current: Bool
        package var tips: Int
        /// From the version before (everything is added for the first).
        package var changes: CatalogDiff
        package var summary: String
    }

    package var versions: [Entry]

    /// The versions of `records` (newest first), each with its changes from the one before.
    /// - Parameter limit: describe only the newest `limit` (each costs a parse of its catalog and of
    ///   the one before: a page of them stays cheap however many versions were uploaded).
    package init(_ records: [CatalogVersionRecord], limit: Int? = nil) {
        let shown = limit.map { min(max(0, $0), records.count) } ?? records.count
        let parsed = min(records.count, shown + 1)
        let catalogs = records[..<parsed].map { try? Catalog(validating: Array($0.text.utf8)) }
        versions = (0..<shown).map { index in
            let record = records[index]
            let catalog = catalogs[index] ?? Catalog()
            let previous = index + 1 < parsed ? catalogs[index + 1] : nil
            let diff = CatalogDiff(from: previous, to: catalog)
            return Entry(
                version: record.version, uploadedBy: record.uploadedBy, uploadedAt: record.uploadedAt,
                restoredFrom: record.restoredFrom, current: index == 0, tips: catalog.tips.count, changes: diff,
                summary: diff.summary)
        }
    }
}
