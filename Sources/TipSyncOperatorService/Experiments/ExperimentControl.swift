import Foundation
package import TipSyncCore
import TipSyncDeviceService
import TipSyncServerBasics
package import TipSyncStorage

/// Starting, stopping and reading experiments (protocol.md §13.12): each start or stop is a new
/// catalog version, stored through the one check every catalog passes; results are computed from
/// the participation rows the tip-usage summarizer derives for every account. The admin API, the
/// CLI and the console all call these.
package struct ExperimentControl: Sendable {
    /// Where the catalog and the participation rows are kept: the only port experiments need.
    package let store: any InsightStore

    package init(_ store: any InsightStore) {
        self.store = store
    }

    /// The catalog is read and stored through the one composition every catalog passes.
    private var catalogs: CatalogComposition { CatalogComposition(store) }

    /// Every experiment in the stored catalog, with its tip, in catalog order.
    package func experiments() async throws -> [(tip: TipDefinition, experiment: TipExperiment)] {
        (try await catalogs.storedCatalog()?.tips ?? []).compactMap { tip in tip.experiment.map { (tip, $0) } }
    }

    /// The experiment named `id` in the stored catalog, with its tip; `nil` when there is none.
    package func experiment(_ id: String) async throws -> (tip: TipDefinition, experiment: TipExperiment)? {
        try await experiments().first { $0.experiment.id == id }
    }

    /// `id`'s results at `now` (milliseconds); `nil` when the stored catalog has no such experiment.
    package func experimentResults(_ id: String, now: Int64, effect: Double = ExperimentResults.defaultEffect)
        async throws -> ExperimentResults?
    {
        guard let (tip, experiment) = try await experiment(id) else { return nil }
        let participants = try await store.experimentParticipants(experiment: id).compactMap(\.usage.experiment)
        return ExperimentResults(
            tip: tip.id, experiment: experiment, participants: participants, now: now, minimumDetectableEffect: effect)
    }

    /// Starts `experiment` on the stored catalog's tip `tip`, as a new catalog version. Throws
    /// ``CatalogCompositionError`` naming the field (`tip`, `experiment.holdout`, …) when it cannot.
    package func startExperiment(_ experiment: TipExperiment, onTip tip: String, by uploader: String, at now: Int64)
        async throws -> Int64
    {
        guard var catalog = try await catalogs.storedCatalog(),
            let index = catalog.tips.firstIndex(where: { $0.id == tip })
        else {
            throw CatalogCompositionError(description: "tip: the stored catalog has no tip '\(tip)'")
        }
        if let running = catalog.tips[index].runningExperiment {
            throw CatalogCompositionError(
                description: "tip: tip '\(tip)' already runs experiment '\(running.id)'; stop it first")
        }
        if let other = catalog.tips.first(where: { $0.experiment?.id == experiment.id }) {
            throw CatalogCompositionError(
                description: "experiment.id: '\(experiment.id)' is already the id of tip '\(other.id)''s experiment")
        }
        var started = experiment
        started.stoppedAt = nil
        catalog.tips[index].experiment = started
        do {
            try catalog.validate()
        } catch {
            // The catalog's path of the experiment is the request's `experiment`.
            throw CatalogCompositionError(
                description: error.description.replacingOccurrences(
                    of: "tips[\(index)].experiment", with: "experiment"))
        }
        return try await catalogs.putCatalogJSON(
            try catalog.canonicalText, uploadedBy: uploader, at: now, restoredFrom: nil)
    }

    /// Stops `id` at `now`, as a new catalog version: from then on nobody is held out and nothing is
    /// recorded; its results count what happened before. `nil` when there is no such experiment;
    /// throws ``CatalogCompositionError`` when it is already stopped.
    package func stopExperiment(_ id: String, by uploader: String, at now: Int64) async throws -> Int64? {
        guard var catalog = try await catalogs.storedCatalog(),
            let index = catalog.tips.firstIndex(where: { $0.experiment?.id == id })
        else { return nil }
        if let stoppedAt = catalog.tips[index].experiment?.stoppedAt {
            throw CatalogCompositionError(description: "experiment: '\(id)' already stopped at \(stoppedAt)")
        }
        catalog.tips[index].experiment?.stoppedAt = now
        return try await catalogs.putCatalogJSON(
            try catalog.canonicalText, uploadedBy: uploader, at: now, restoredFrom: nil)
    }

    /// Every reached account's record of `id`, by account name: CSV (`account,arm,reachedAt,
    /// exposedAt,convertedAt`, milliseconds) or JSON (`{"participants": [...]}`).
    package func experimentParticipantsText(_ id: String, csv: Bool) async throws -> String {
        let rows = ExperimentParticipantRecord.ordered(
            try await store.experimentParticipants(experiment: id).compactMap { row in
                row.usage.experiment.map { ExperimentParticipantRecord(account: row.account, $0) }
            })
        return csv
            ? ExperimentParticipantRecord.csv(rows)
            : String(
                decoding: try JSONCoding.encoder.encode(ExperimentParticipantList(participants: rows)), as: UTF8.self)
    }
}
