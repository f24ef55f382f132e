import Foundation
import TipSyncCore

/// The server's catalog, followed when a pull, a stream or `ready` names a version not applied.
extension SyncClient {
    /// Fetches and applies the server's catalog when `tag` (the version a pull named) is neither the
    /// one applied nor one refused before. A catalog that does not validate is refused: the replica
    /// keeps its catalog, ``catalogError`` says why, and the same version is not fetched again.
    func followCatalog(_ tag: String?) async throws {
        let applied = try replica.serverCatalogTag
        // No tag: whatever the server holds now, asked conditionally (`304` when it is the applied one).
        if let tag { guard tag != applied, tag != refusedCatalogTag else { return } }
        var headers: [String: String] = [:]
        if let applied { headers["If-None-Match"] = applied }
        let (response, _) = try await send("GET", "/v1/catalog", headers: headers)
        switch response.status {
        case 200:
            let received = response.headers["etag"] ?? tag ?? "unversioned"
            do {
                let catalog = try replica.applyServerCatalog(response.body, tag: received)
                catalogError = nil
                refusedCatalogTag = nil
                configuration.onServerCatalog?(.applied(tag: received, catalog: catalog, text: response.body))
            } catch let error as Catalog.ValidationError {
                refusedCatalogTag = received
                catalogError = "the server's catalog \(received) is not valid: \(error.description)"
                lastError = .invalidCatalog(catalogError!)
                publishStatus(error: .some(lastError))
                configuration.onServerCatalog?(.refused(tag: received, reason: error.description))
            }
        case 304, 404:
            return  // current already, or removed meanwhile: keep what the replica has
        default:
            throw Self.rejection(response)
        }
    }
}
