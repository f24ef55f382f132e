import Foundation
import TipSyncCore
import TipSyncServerBasics

/// One reached account in an export.
public struct ExperimentParticipantRecord: Codable, Sendable, Hashable {
    public var account: String
    public var arm: TipExperiment.Arm
    public var reachedAt: Int64?
    public var exposedAt: Int64?
    public var convertedAt: Int64?

    public init(account: String, _ participation: ExperimentParticipation) {
        self.account = account
        arm = participation.arm
        reachedAt = participation.reachedAt
        exposedAt = participation.exposedAt
        convertedAt = participation.convertedAt
    }

    /// The records as CSV with a header line (``CSVText``: every cell neutralized against formula
    /// injection, quoted as RFC 4180 asks).
    public static func csv(_ rows: [ExperimentParticipantRecord]) -> String {
        var text = CSVText.line(["account", "arm", "reachedAt", "exposedAt", "convertedAt"])
        for row in rows {
            let times = [row.reachedAt, row.exposedAt, row.convertedAt].map { $0.map(String.init) ?? "" }
            text += CSVText.line([row.account, row.arm.rawValue] + times)
        }
        return text
    }
}

/// The JSON of an export: `{"participants": [...]}`.
struct ExperimentParticipantList: Codable, Sendable {
    var participants: [ExperimentParticipantRecord]
}
