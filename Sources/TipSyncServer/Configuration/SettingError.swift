import TipSyncServerBasics
import TipSyncStorage

/// A setting whose value is not one the server can run with; the message names the flag and the
/// environment variable (`--max-batch / TIPSYNC_MAX_BATCH: 'ten' is not an integer`).
package struct SettingError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, naming the setting.
    package let description: String

    init(_ setting: Setting, _ problem: String) {
        description = "\(setting.names): \(problem)"
    }

    init(key: String, _ problem: String) {
        self.init(Setting(key: key, defaultValue: "", unit: nil, summary: ""), problem)
    }

    init(_ message: String) {
        description = message
    }
}
