import Foundation
import Hummingbird
import TipSyncCore
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// The console's experiment pages (protocol.md §13.12): every experiment with its verdict, a form to
/// start one, and a results page per experiment — per-arm counts, the difference with its 95%
/// interval drawn to scale, the sample size for an effect, stop and export.
extension ConsoleController {
    func addExperimentRoutes(to group: RouterGroup<SyncRequestContext>, table: RouteTable, prefix: String) {
        group.on("experiments", method: .get, recordingIn: table, prefix: prefix, use: signedIn(experiments))
        group.on("experiments", method: .post, recordingIn: table, prefix: prefix, use: signedIn(startExperiment))
        group.on(
            "experiments/:experiment", method: .get, recordingIn: table, prefix: prefix, use: signedIn(experiment))
        group.on(
            "experiments/:experiment/stop", method: .post, recordingIn: table, prefix: prefix,
            use: signedIn(stopExperiment))
        group.on(
            "experiments/:experiment/export", method: .get, recordingIn: table, prefix: prefix,
            use: signedIn(exportExperiment))
    }

    @Sendable func experiments(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        try await renderExperiments(signedIn, notice: request.uri.queryParameters["notice"].map(String.init))
    }

    func renderExperiments(_ signedIn: SignedIn, notice: String? = nil, error: String? = nil) async throws -> Response {
        var view = signedIn.view
        view["title"] = "Experiments"
        if let notice { view["notice"] = notice }
        if let error { view["error"] = error }
        var rows: [[String: Any]] = []
        for (_, experiment) in try await ExperimentControl(store).experiments() {
            guard let results = try await ExperimentControl(store).experimentResults(experiment.id, now: now()) else {
                continue
            }
            rows.append([
                "id": experiment.id, "path": Self.pathSegment(experiment.id), "tip": results.tip,
                "holdout": Self.percent(experiment.holdout), "state": results.state,
                "running": experiment.isRunning,
                "reached": results.arms.map { "\($0.reached)" }.joined(separator: " / "),
                "verdict": results.verdict,
            ])
        }
        view["experiments"] = rows
        view["tips"] = ((try await storedCatalog())?.tips ?? []).filter { $0.runningExperiment == nil }.map {
            ["tip": $0.id]
        }
        view["events"] = ((try await storedCatalog())?.events ?? []).map { ["event": $0.id] }
        return render("experiments", view)
    }

    @Sendable func startExperiment(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let form = signedIn.form
        let id = (form["id"] ?? "").trimmingCharacters(in: .whitespaces)
        let tip = form["tip"] ?? ""
        let goal = form["goal"] ?? ""
        guard let holdout = Double((form["holdout"] ?? "").trimmingCharacters(in: .whitespaces)) else {
            return try await renderExperiments(signedIn, error: "Not started: holdout: a percent, such as 10")
        }
        let window = Double((form["windowDays"] ?? "").trimmingCharacters(in: .whitespaces)).map { $0 * 86400 }
        let experiment = TipExperiment(
            id: id, holdout: holdout, goal: goal == "actionPerformed" ? .actionPerformed : .event(goal), window: window)
        do {
            if let problem = TipExperiment.idProblem(id) {
                throw CatalogCompositionError(description: "id: \(problem)")
            }
            _ = try await ExperimentControl(store).startExperiment(
                experiment, onTip: tip, by: signedIn.session.adminKeyName, at: now())
        } catch let error as CatalogCompositionError {
            return try await renderExperiments(signedIn, error: "Not started, nothing changed: \(error.description)")
        }
        admin.notifier.handle(.catalog)
        return Self.redirect("/console/experiments/\(Self.pathSegment(id))")
    }

    @Sendable func stopExperiment(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let id = try ExperimentController.id(context)
        do {
            guard
                try await ExperimentControl(store).stopExperiment(id, by: signedIn.session.adminKeyName, at: now())
                    != nil
            else {
                throw ExperimentController.noExperiment(id)
            }
        } catch let error as CatalogCompositionError {
            return try await renderExperiments(signedIn, error: error.description)
        }
        admin.notifier.handle(.catalog)
        return Self.redirect("/console/experiments/\(Self.pathSegment(id))")
    }

    @Sendable func exportExperiment(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        try await ExperimentController(admin: admin).participants(request, context: context)
    }

    /// One experiment's results.
    @Sendable func experiment(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let id = try ExperimentController.id(context)
        // The form asks in percentage points (2), the API in a difference of rates (0.02).
        var effect = ExperimentResults.defaultEffect
        if let text = request.uri.queryParameters["effect"].map(String.init), !text.isEmpty {
            guard let points = Double(text), points.isFinite, points != 0, abs(points) < 100 else {
                throw SyncError.invalidParameter("effect: percentage points, such as 2")
            }
            effect = points / 100
        }
        guard let results = try await ExperimentControl(store).experimentResults(id, now: now(), effect: effect) else {
            throw ExperimentController.noExperiment(id)
        }
        var view = signedIn.view
        view["title"] = "Experiment \(id)"
        view["id"] = id
        view["path"] = Self.pathSegment(id)
        view["tip"] = results.tip
        view["tipPath"] = Self.pathSegment(results.tip)
        view["holdout"] = Self.percent(results.experiment.holdout)
        view["state"] = results.state
        view["running"] = results.experiment.isRunning
        if let stoppedAt = results.experiment.stoppedAt { view["stoppedAt"] = Self.time(stoppedAt) }
        view["goal"] =
            switch results.experiment.goal {
            case .event(let event): "a donation to \(event)"
            case .actionPerformed: "the tip's actionPerformed"
            }
        view["window"] = ExperimentResults.days(results.experiment.windowSeconds)
        view["verdict"] = results.verdict
        view["minimum"] = results.minimumPerArm
        view["arms"] = results.arms.map { arm in
            [
                "arm": arm.arm.rawValue, "reached": arm.reached,
                "exposed": arm.arm != .holdout ? "\(arm.exposed)" : "—",
                "analysed": arm.analysed,
                "converted": arm.convertedSoFar > arm.converted
                    ? "\(arm.converted) (\(arm.convertedSoFar - arm.converted) more so far, windows open)"
                    : "\(arm.converted)",
                "rate": arm.rate.map { String(format: "%.1f%%", $0 * 100) } ?? "—",
                "versus": arm.difference.map {
                    "\(ExperimentResults.points($0.estimate)) (\(ExperimentResults.points($0.lower)) to \(ExperimentResults.points($0.upper)))"
                } ?? "—",
            ] as [String: Any]
        }
        view["confidence"] = String(format: "%g", (results.confidence * 1000).rounded() / 10)
        view["confidenceSentence"] = results.confidenceSentence
        if let difference = results.difference {
            view["difference"] = [
                "estimate": ExperimentResults.points(difference.estimate),
                "lower": ExperimentResults.points(difference.lower),
                "upper": ExperimentResults.points(difference.upper),
                "chart": Self.intervalChart(difference),
            ]
        }
        view["effect"] = String(format: "%g", effect * 100)
        if let size = results.sampleSize {
            view["sampleSize"] = ["holdout": size.holdout, "treatment": size.treatment, "total": size.total]
        }
        return render("experiment", view)
    }

    /// A percent without a needless `.0`: `10`, `2.5`.
    static func percent(_ value: Double) -> String { String(format: "%g", value) }

    /// The interval on an axis through 0, to scale, as SVG the server draws (no script): a line from
    /// lower to upper, a dot at the estimate, a mark at 0.
    static func intervalChart(_ difference: ProportionDifference) -> String {
        let reach = max(abs(difference.lower), abs(difference.upper), 0.01) * 1.15
        func x(_ value: Double) -> String { String(format: "%.1f", 150 + value / reach * 140) }
        return """
            <svg class="interval" viewBox="0 0 300 44" role="img" aria-label="difference \(ExperimentResults.points(difference.estimate)) points, 95% interval \(ExperimentResults.points(difference.lower)) to \(ExperimentResults.points(difference.upper))"><line x1="150" y1="2" x2="150" y2="28" stroke="#5d6678" stroke-dasharray="2 2"/><text x="150" y="41" font-size="10" text-anchor="middle" fill="#5d6678">0</text><line x1="\(x(difference.lower))" y1="15" x2="\(x(difference.upper))" y2="15" stroke="#2f5bea" stroke-width="3"/><circle cx="\(x(difference.estimate))" cy="15" r="5" fill="#2f5bea"/><text x="\(x(difference.lower))" y="41" font-size="10" text-anchor="middle" fill="#1d2330">\(ExperimentResults.points(difference.lower))</text><text x="\(x(difference.upper))" y="41" font-size="10" text-anchor="middle" fill="#1d2330">\(ExperimentResults.points(difference.upper))</text></svg>
            """
    }
}
