import Foundation
import TipSyncCore

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

    /// RFC 4180 CSV with a header line; a field with a comma, quote or line break is quoted.
    public static func csv(_ rows: [ExperimentParticipantRecord]) -> String {
        func field(_ text: String) -> String {
            text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        }
        var text = "account,arm,reachedAt,exposedAt,convertedAt\r\n"
        for row in rows {
            let times = [row.reachedAt, row.exposedAt, row.convertedAt].map { $0.map(String.init) ?? "" }
            text += ([field(row.account), row.arm.rawValue] + times).joined(separator: ",") + "\r\n"
        }
        return text
    }
}

/// The JSON of an export: `{"participants": [...]}`.
struct ExperimentParticipantList: Codable, Sendable {
    var participants: [ExperimentParticipantRecord]
}
