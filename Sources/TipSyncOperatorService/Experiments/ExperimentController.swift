import Foundation
package import Hummingbird
import NIOCore
import TipSyncCore
package import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// The `/admin/v1/experiments` routes (protocol.md §15): list, start, stop and read experiments,
/// export their per-account records, and size one. Starting and stopping store a new catalog version
/// and tell devices at once, as any catalog upload does.
package struct ExperimentController: Sendable {
    let admin: AdminController

    package init(admin: AdminController) {
        self.admin = admin
    }
    var store: any InsightStore { admin.store }

    package func addRoutes(to group: RouterGroup<SyncRequestContext>, table: RouteTable) {
        let prefix = "/admin/v1"
        group.on("experiments", method: .get, recordingIn: table, prefix: prefix, use: list)
        group.on("experiments", method: .post, recordingIn: table, prefix: prefix, use: start)
        group.on("experiments/sample-size", method: .get, recordingIn: table, prefix: prefix, use: sampleSize)
        group.on("experiments/:experiment", method: .get, recordingIn: table, prefix: prefix, use: results)
        group.on("experiments/:experiment/stop", method: .post, recordingIn: table, prefix: prefix, use: stop)
        group.on(
            "experiments/:experiment/participants", method: .get, recordingIn: table, prefix: prefix,
            use: participants)
    }

    /// Every experiment of the stored catalog with its results now.
    @Sendable func list(_ request: Request, context: SyncRequestContext) async throws -> Response {
        var list: [ExperimentResults] = []
        for (_, experiment) in try await ExperimentControl(store).experiments() {
            if let results = try await ExperimentControl(store).experimentResults(experiment.id, now: admin.now()) {
                list.append(results)
            }
        }
        return try SyncController.json(ExperimentList(experiments: list))
    }

    /// Starts an experiment: `{"tip": ID, "experiment": {"id", "holdout", "goal", "window"}}`.
    @Sendable func start(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let json: JSONValue
        do {
            json = try JSONParser.parse(body.readableBytesView)
        } catch let error as JSONParser.Error where error.isNumberOutOfRange || error.isDuplicateMemberName {
            throw SyncError.invalidParameter(error.description)  // JSON, but a value the body may not hold
        } catch {
            throw SyncError.malformedJSON("\(error)")
        }
        guard case .object(let members) = json else {
            throw SyncError.invalidParameter(#"body: expected {"tip": ID, "experiment": {…}}"#)
        }
        // A member this route does not know is refused, not ignored (as a catalog's are): a
        // misspelled one must not start an experiment the operator did not describe.
        for name in members.keys.sorted() where name != "tip" && name != "experiment" {
            throw SyncError.invalidParameter(
                "\(name): unknown member; the body is {\"tip\": ID, \"experiment\": {…}} (protocol.md §15)")
        }
        guard case .string(let tip)? = members["tip"] else {
            throw SyncError.invalidParameter("tip: the id of a tip of the stored catalog, as a string")
        }
        guard let experimentJSON = members["experiment"] else {
            throw SyncError.invalidParameter(#"experiment: {"id", "holdout", "goal", "window"} (protocol.md §13.12)"#)
        }
        let experiment: TipExperiment
        do {
            experiment = try JSONValueDecoder().decode(TipExperiment.self, from: experimentJSON)
        } catch let error as DecodingError {
            let path = error.fieldPath
            throw SyncError.invalidParameter(
                path.isEmpty ? "experiment: \(error.reason)" : "experiment.\(path): \(error.reason)")
        } catch {
            throw SyncError.invalidParameter("experiment: \(error)")
        }
        let version: Int64
        do {
            version = try await ExperimentControl(store).startExperiment(
                experiment, onTip: tip, by: context.adminKey ?? "admin", at: admin.now())
        } catch let error as CatalogCompositionError {
            throw SyncError.invalidParameter(error.description)
        }
        admin.notifier.handle(.catalog)
        return SyncController.json(
            text: #"{"experiment":\#(JSONValue.string(experiment.id).canonicalText),"version":\#(version)}"#)
    }

    /// Stops an experiment now.
    @Sendable func stop(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let id = try Self.id(context)
        let version: Int64?
        do {
            version = try await ExperimentControl(store).stopExperiment(
                id, by: context.adminKey ?? "admin", at: admin.now())
        } catch let error as CatalogCompositionError {
            throw SyncError.invalidParameter(error.description)
        }
        guard let version else { throw Self.noExperiment(id) }
        admin.notifier.handle(.catalog)
        return SyncController.json(
            text: #"{"experiment":\#(JSONValue.string(id).canonicalText),"version":\#(version)}"#)
    }

    /// One experiment's results; `?effect=0.01` sizes it for another minimum detectable effect.
    @Sendable func results(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let id = try Self.id(context)
        let effect = try Self.effect(request)
        guard let results = try await ExperimentControl(store).experimentResults(id, now: admin.now(), effect: effect)
        else {
            throw Self.noExperiment(id)
        }
        return try SyncController.json(results)
    }

    /// Every reached account's record, as JSON (`{"participants": […]}`) or, with `?format=csv` or
    /// `Accept: text/csv`, as CSV: `account,arm,reachedAt,exposedAt,convertedAt` (ISO 8601 UTC times; JSON: milliseconds).
    @Sendable func participants(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let id = try Self.id(context)
        guard try await ExperimentControl(store).experiment(id) != nil else { throw Self.noExperiment(id) }
        let csv = try ExportFormat.wantsCSV(request)
        let text = try await ExperimentControl(store).experimentParticipantsText(id, csv: csv)
        return csv ? ExportFormat.csv(text, filename: "\(id)-participants.csv") : SyncController.json(text: text)
    }

    /// `?baseline=0.1&effect=0.02&holdout=10`: reached accounts needed per arm.
    @Sendable func sampleSize(_ request: Request, context: SyncRequestContext) async throws -> Response {
        func number(_ name: String) throws -> Double {
            guard let text = request.uri.queryParameters[Substring(name)].map(String.init), let value = Double(text)
            else {
                throw SyncError.invalidParameter("\(name): a number is required")
            }
            return value
        }
        let baseline = try number("baseline")
        let effect = try number("effect")
        let holdout = try number("holdout")
        guard let size = SampleSize(baseline: baseline, effect: effect, holdoutPercent: holdout) else {
            throw SyncError.invalidParameter(
                "baseline, effect, holdout: a baseline rate and baseline + effect within (0, 1), an effect other than 0, a holdout percent within (0, 100)"
            )
        }
        return try SyncController.json(
            SampleSizeAnswer(
                baseline: baseline, effect: effect, holdout: holdout, holdoutAccounts: size.holdout,
                treatmentAccounts: size.treatment, totalAccounts: size.total))
    }

    static func id(_ context: SyncRequestContext) throws -> String {
        let id = context.parameters.get("experiment") ?? ""
        if let problem = TipExperiment.idProblem(id) { throw SyncError.invalidParameter("experiment: \(problem)") }
        return id
    }

    static func effect(_ request: Request) throws -> Double {
        guard let text = request.uri.queryParameters["effect"].map(String.init) else {
            return ExperimentResults.defaultEffect
        }
        guard let effect = Double(text), effect.isFinite, effect != 0, abs(effect) < 1 else {
            throw SyncError.invalidParameter("effect: an absolute difference of rates, such as 0.02, not 0")
        }
        return effect
    }

    static func noExperiment(_ id: String) -> SyncError {
        .notFound("no experiment '\(id)' in the stored catalog (GET /admin/v1/experiments lists them)")
    }
}

struct ExperimentList: Codable, Sendable {
    var experiments: [ExperimentResults]
}

package struct SampleSizeAnswer: Codable, Sendable {
    var baseline: Double
    var effect: Double
    var holdout: Double
    package var holdoutAccounts: Int
    package var treatmentAccounts: Int
    var totalAccounts: Int
}
