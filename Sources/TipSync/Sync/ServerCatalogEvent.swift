public import Foundation
import TipSyncCore

/// What a ``SyncClient`` that follows the server's catalog did with a new version
/// (``SyncConfiguration/followsServerCatalog``).
public enum ServerCatalogEvent: Sendable, Hashable {
    /// Validated and applied: the replica evaluates tips with it from now on.
    case applied(tag: String, catalog: Catalog, text: Data)
    /// Not applied, because it does not validate (`reason` names the field); the replica keeps the
    /// catalog it had.
    case refused(tag: String, reason: String)
}
