import Foundation
import Hummingbird
import NIOCore
import TipSyncCore

/// `GET /admin/v1/catalog/versions`.
public struct CatalogVersionList: Encodable, Sendable {
    public struct Entry: Encodable, Sendable {
        public var version: Int64
        public var uploadedBy: String
        public var uploadedAt: Int64
        public var restoredFrom: Int64?
        public var current: Bool
        public var tips: Int
        /// From the version before (everything is added for the first).
        public var changes: CatalogDiff
        public var summary: String
    }

    public var versions: [Entry]

    public init(_ records: [CatalogVersionRecord]) {
        let catalogs = records.map { try? Catalog(validating: Array($0.text.utf8)) }
        versions = records.indices.map { index in
            let record = records[index]
            let catalog = catalogs[index] ?? Catalog()
            let previous = index + 1 < records.count ? catalogs[index + 1] : nil
            let diff = CatalogDiff(from: previous, to: catalog)
            return Entry(
                version: record.version, uploadedBy: record.uploadedBy, uploadedAt: record.uploadedAt,
                restoredFrom: record.restoredFrom, current: index == 0, tips: catalog.tips.count, changes: diff,
                summary: diff.summary)
        }
    }
}
