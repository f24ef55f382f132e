import Foundation
import Hummingbird
import NIOCore
import TipSyncCore
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// The tip figures the console's Tips page shows, for programs (issue 73, item 5):
/// `GET /admin/v1/tips`, as JSON or CSV.
extension AdminController {
    /// Every tip across every account, in tip id order: JSON (`{"tips": […]}`) or, with
    /// `?format=csv` or `Accept: text/csv`, CSV with one line per tip.
    @Sendable func tipFigures(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let csv = try ExportFormat.wantsCSV(request)
        let figures = try await store.tipUsageTotals().map(TipFigures.init)
            .sorted { $0.tip.utf8.lexicographicallyPrecedes($1.tip.utf8) }
        if !csv { return try SyncController.json(TipFigureList(tips: figures)) }
        var text = CSVText.line(TipFigures.csvHeader)
        for figure in figures { text += CSVText.line(figure.csvCells) }
        return ExportFormat.csv(text, filename: "tipsync-tips.csv")
    }
}

struct TipFigureList: Codable, Sendable {
    var tips: [TipFigures]
}

/// One tip's figures across every account (``TipUsageTotals``), as `GET /admin/v1/tips` gives them.
struct TipFigures: Codable, Sendable {
    var tip: String
    /// Accounts whose log mentions the tip.
    var accounts: Int
    /// Accounts that displayed it at least once.
    var displayedAccounts: Int
    /// Accounts with the tip invalidated, by reason (`tipClosed`, `actionPerformed`,
    /// `displayCountExceeded`, `displayDurationExceeded`; 0 when none).
    var invalidated: [String: Int]
    /// Accounts by displays: `0`, `1`, `2–3`, `4–7`, `8+`.
    var displayBuckets: [String: Int]
    /// Median milliseconds from the first display to the invalidation (`null`: no account has both).
    var medianMillisecondsToInvalidation: Int64?
    /// Accounts that used the feature (invalidated with `actionPerformed`) at or after seeing the tip.
    var usedAfterSeeing: Int

    static let reasons: [InvalidationReason] = [
        .tipClosed, .actionPerformed, .displayCountExceeded, .displayDurationExceeded,
    ]

    init(_ totals: TipUsageTotals) {
        tip = totals.tip
        accounts = totals.accounts
        displayedAccounts = totals.displayedAccounts
        invalidated = Dictionary(uniqueKeysWithValues: Self.reasons.map { ($0.rawValue, totals.invalidated[$0] ?? 0) })
        displayBuckets = Dictionary(uniqueKeysWithValues: zip(TipUsageTotals.bucketLabels, totals.displayBuckets))
        medianMillisecondsToInvalidation = totals.medianMillisecondsToInvalidation
        usedAfterSeeing = totals.usedAfterSeeing
    }

    static var csvHeader: [String] {
        ["tip", "accounts", "displayedAccounts"] + reasons.map(\.rawValue)
            + TipUsageTotals.bucketLabels.map { "displays \($0)" } + [
                "medianMillisecondsToInvalidation", "usedAfterSeeing",
            ]
    }

    var csvCells: [String] {
        [tip, "\(accounts)", "\(displayedAccounts)"] + Self.reasons.map { "\(invalidated[$0.rawValue] ?? 0)" }
            + TipUsageTotals.bucketLabels.map { "\(displayBuckets[$0] ?? 0)" }
            + [medianMillisecondsToInvalidation.map { "\($0)" } ?? "", "\(usedAfterSeeing)"]
    }
}
