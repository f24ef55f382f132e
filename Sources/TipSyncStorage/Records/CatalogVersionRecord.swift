import TipSyncServerBasics

/// One stored catalog version (`GET /admin/v1/catalog/versions`): every upload is kept.
package struct CatalogVersionRecord: Sendable, Hashable {
    /// 1 for the first upload, +1 for each next one (a restore is an upload too).
    package var version: Int64
    /// The admin key's name that uploaded it (`cli` for `tipsync-server catalog put`).
    package var uploadedBy: String
    /// Milliseconds since 1970.
    package var uploadedAt: Int64
    /// The version it restored, for a restore.
    package var restoredFrom: Int64?
    /// The catalog's text as uploaded.
    package var text: String

    package init(version: Int64, uploadedBy: String, uploadedAt: Int64, restoredFrom: Int64?, text: String) {
        self.version = version
        self.uploadedBy = uploadedBy
        self.uploadedAt = uploadedAt
        self.restoredFrom = restoredFrom
        self.text = text
    }
}
