import TipSyncServerBasics

/// One stored catalog version (`GET /admin/v1/catalog/versions`): every upload is kept.
public struct CatalogVersionRecord: Sendable, Hashable {
    /// 1 for the first upload, +1 for each next one (a restore is an upload too).
    public var version: Int64
    /// The admin key's name that uploaded it (`cli` for `tipsync-server catalog put`).
    public var uploadedBy: String
    /// Milliseconds since 1970.
    public var uploadedAt: Int64
    /// The version it restored, for a restore.
    public var restoredFrom: Int64?
    /// The catalog's text as uploaded.
    public var text: String

    public init(version: Int64, uploadedBy: String, uploadedAt: Int64, restoredFrom: Int64?, text: String) {
        self.version = version
        self.uploadedBy = uploadedBy
        self.uploadedAt = uploadedAt
        self.restoredFrom = restoredFrom
        self.text = text
    }
}
