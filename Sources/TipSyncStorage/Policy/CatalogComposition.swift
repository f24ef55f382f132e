package import TipSyncCore
import TipSyncServerBasics

/// Composing the stored catalog from platforms' parts (protocol.md §13.11): read what is stored,
/// apply the core's ``TipSyncCore/Catalog/merging(_:as:)`` or ``TipSyncCore/Catalog/removingPlatform(_:keepingShared:)``,
/// and store the result as a new version. The admin API, the CLI and the console all compose here,
/// and every catalog that is stored — an upload, a part, a restore, an experiment's start or stop —
/// is stored through ``putCatalogJSON(_:uploadedBy:at:restoredFrom:)``, which refuses a change to a
/// running experiment.
package struct CatalogComposition: Sendable {
    /// Where catalog versions are kept: the only port composing needs.
    package let store: any InsightStore

    package init(_ store: any InsightStore) {
        self.store = store
    }

    /// Stores a catalog's JSON (already validated) as the newest, current version — unless it would
    /// change a running experiment (``TipSyncCore/Catalog/experimentProblem(replacing:)``): then it
    /// throws ``CatalogCompositionError`` naming the field and stores nothing. Every upload, part,
    /// restore and CLI command stores through here.
    @discardableResult
    package func putCatalogJSON(_ text: String, uploadedBy: String, at now: Int64, restoredFrom: Int64?) async throws
        -> Int64
    {
        if let new = try? Catalog(validating: Array(text.utf8)),
            let problem = new.experimentProblem(
                replacing: try await store.catalogJSON().flatMap { try? Catalog(validating: Array($0.utf8)) })
        {
            throw CatalogCompositionError(description: problem)
        }
        return try await store.insertCatalogVersion(text, uploadedBy: uploadedBy, at: now, restoredFrom: restoredFrom)
    }

    /// Stores a new current catalog version uploaded by `uploadedBy` now.
    @discardableResult
    package func putCatalogJSON(_ text: String, uploadedBy: String = "cli") async throws -> Int64 {
        try await putCatalogJSON(text, uploadedBy: uploadedBy, at: WallClock.milliseconds(), restoredFrom: nil)
    }

    /// Merges `part` as `platform`'s part of the stored catalog (none stored: an empty one).
    /// Throws ``CatalogCompositionError`` naming the field when the part clashes with what stays.
    package func mergePlatformPart(_ part: Catalog, as platform: String, uploadedBy: String, at now: Int64)
        async throws -> (version: Int64, tips: Int)
    {
        let merged: Catalog
        do {
            merged = try (try await storedCatalog() ?? Catalog()).merging(part, as: platform)
            try merged.validate()
        } catch let error as Catalog.CompositionError {
            throw CatalogCompositionError(description: error.description)
        } catch let error as Catalog.ValidationError {
            throw CatalogCompositionError(description: error.description)
        }
        let version = try await putCatalogJSON(
            try merged.canonicalText, uploadedBy: uploadedBy, at: now, restoredFrom: nil)
        return (version, merged.tips.count)
    }

    /// Stores `text` (a validated catalog) as the whole catalog, the one way every whole upload
    /// stores (the admin API, the CLI, the console). Unless `replacingParts`, an upload that would
    /// remove what a platform's part added (``TipSyncCore/Catalog/platformPartsRemoved(by:)``) is
    /// refused with ``PlatformPartsWouldGo`` naming each, and nothing is stored: one team's upload
    /// never deletes another team's tips silently.
    package func putWholeCatalog(_ text: String, replacingParts: Bool, uploadedBy: String, at now: Int64)
        async throws -> Int64
    {
        if !replacingParts, let stored = try await storedCatalog(),
            let new = try? Catalog(validating: Array(text.utf8))
        {
            let removed = stored.platformPartsRemoved(by: new)
            if !removed.isEmpty { throw PlatformPartsWouldGo(removed: removed) }
        }
        return try await putCatalogJSON(text, uploadedBy: uploadedBy, at: now, restoredFrom: nil)
    }

    /// Removes `platform`'s part of the stored catalog; `nil` when no catalog is stored.
    package func removePlatformPart(_ platform: String, uploadedBy: String, at now: Int64) async throws -> (
        version: Int64, tips: Int
    )? {
        guard let stored = try await storedCatalog() else { return nil }
        let removed = stored.removingPlatform(platform)
        let version = try await putCatalogJSON(
            try removed.canonicalText, uploadedBy: uploadedBy, at: now, restoredFrom: nil)
        return (version, removed.tips.count)
    }

    /// The stored catalog, read; `nil` when none is stored.
    package func storedCatalog() async throws -> Catalog? {
        guard let text = try await store.catalogJSON() else { return nil }
        do {
            return try Catalog(validating: Array(text.utf8))
        } catch {
            throw CatalogCompositionError(
                description: "catalog: the stored catalog does not validate: \(error.description)")
        }
    }
}

/// Why a platform's part could not be merged: the message starts with the field (`tips[0].id: …`).
package struct CatalogCompositionError: Error, CustomStringConvertible, Sendable {
    package var description: String

    package init(description: String) {
        self.description = description
    }
}

/// A whole-catalog upload refused because it would remove what platforms' parts added
/// (``CatalogComposition/putWholeCatalog(_:replacingParts:uploadedBy:at:)``).
package struct PlatformPartsWouldGo: Error, CustomStringConvertible, Sendable {
    /// What would go: `widgets (ios)`, `platformSettings.ios`.
    package var removed: [String]

    /// The refusal in protocol terms, for every surface; each adds how to say "replace everything".
    package var description: String {
        "tips: this upload would remove what platform parts added: \(removed.joined(separator: ", ")); "
            + "include them in the catalog, upload only your platform's part, or replace the whole catalog "
            + "including them"
    }

    package init(removed: [String]) {
        self.removed = removed
    }
}
