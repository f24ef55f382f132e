import Foundation
package import TipSyncCore
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// One reached account in an export.
package struct ExperimentParticipantRecord: Codable, Sendable, Hashable {
    package var account: String
    package var arm: TipExperiment.Arm
    package var reachedAt: Int64?
    package var exposedAt: Int64?
    package var convertedAt: Int64?

    package init(account: String, _ participation: ExperimentParticipation) {
        self.account = account
        arm = participation.arm
        reachedAt = participation.reachedAt
        exposedAt = participation.exposedAt
        convertedAt = participation.convertedAt
    }

    /// The records as CSV with a header line (``CSVText``: every cell neutralized against formula
    /// injection, quoted as RFC 4180 asks), times in ISO 8601 UTC to the millisecond
    /// (`2026-12-06T07:14:03.250Z`) as spreadsheets read them, rows in ``ordered(_:)``.
    package static func csv(_ rows: [ExperimentParticipantRecord]) -> String {
        var text = CSVText.line(["account", "arm", "reachedAt", "exposedAt", "convertedAt"])
        for row in ordered(rows) {
            let times = [row.reachedAt, row.exposedAt, row.convertedAt].map { $0.map(Self.isoTime) ?? "" }
            text += CSVText.line([row.account, row.arm.rawValue] + times)
        }
        return text
    }

    /// Rows in a stable order whatever the store returned: by account (its UTF-8 bytes), then arm.
    package static func ordered(_ rows: [ExperimentParticipantRecord]) -> [ExperimentParticipantRecord] {
        rows.sorted {
            $0.account != $1.account
                ? $0.account.utf8.lexicographicallyPrecedes($1.account.utf8)
                : $0.arm.rawValue.utf8.lexicographicallyPrecedes($1.arm.rawValue.utf8)
        }
    }

    /// Milliseconds since 1970 as ISO 8601 UTC with milliseconds.
    package static func isoTime(_ milliseconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            .formatted(
                .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}

/// The JSON of an export: `{"participants": [...]}`.
struct ExperimentParticipantList: Codable, Sendable {
    var participants: [ExperimentParticipantRecord]
}
