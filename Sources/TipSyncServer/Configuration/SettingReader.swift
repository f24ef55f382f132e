import Configuration
import Foundation
import TipSyncServerBasics
import TipSyncStorage

/// Reads settings through a swift-configuration `ConfigReader`, one call per setting, each naming its
/// key, default, unit and summary once; the calls also describe the settings (``settings``).
///
/// A setting no provider has takes its default. A value that is present but not of the setting's
/// type, or outside its range, is a ``SettingError`` naming the flag and the environment variable:
/// a typo never silently becomes the default.
struct SettingReader {
    let config: ConfigReader
    /// The settings read so far, in reading order.
    private(set) var settings: [Setting] = []

    init(_ config: ConfigReader) {
        self.config = config
    }

    private mutating func describe(_ key: String, _ defaultValue: String, _ unit: String?, _ summary: String)
        -> Setting
    {
        let setting = Setting(key: key, defaultValue: defaultValue, unit: unit, summary: summary)
        settings.append(setting)
        return setting
    }

    /// The value, typed by `read`, else (present but unreadable) an error, else `nil`.
    private func value<Value>(_ setting: Setting, _ kind: String, _ read: (ConfigKey) -> Value?) throws -> Value? {
        let key = ConfigKey(setting.key)
        if let value = read(key) { return value }
        if let text = config.string(forKey: key) { throw SettingError(setting, "'\(text)' is not \(kind)") }
        return nil
    }

    mutating func string(_ key: String, default defaultValue: String, _ summary: String) -> String {
        let setting = describe(key, defaultValue, nil, summary)
        return config.string(forKey: ConfigKey(setting.key)) ?? defaultValue
    }

    /// A string turned into a value by `parse`, which returns `nil` or throws for text it refuses
    /// (its error's description is kept in the ``SettingError``).
    mutating func parsed<Value>(
        _ key: String, default defaultText: String, _ summary: String, _ parse: (String) throws -> Value?
    ) throws -> Value {
        let setting = describe(key, defaultText, nil, summary)
        let text = config.string(forKey: ConfigKey(setting.key)) ?? defaultText
        let value: Value?
        do { value = try parse(text) } catch { throw SettingError(setting, "\(error)") }
        guard let value else { throw SettingError(setting, "'\(text)' is not a valid value") }
        return value
    }

    /// A string that has no default: unset is `nil` (`defaultText` says what that means).
    mutating func optionalString(_ key: String, whenUnset defaultText: String, _ summary: String) -> String? {
        let setting = describe(key, defaultText, nil, summary)
        return config.string(forKey: ConfigKey(setting.key)).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A comma-separated list (on the command line also a repeated flag); empty entries are dropped.
    mutating func list(_ key: String, whenUnset defaultText: String, _ summary: String) -> [String] {
        let setting = describe(key, defaultText, nil, summary)
        return (config.stringArray(forKey: ConfigKey(setting.key)) ?? [])
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    mutating func bool(_ key: String, default defaultValue: Bool, _ summary: String) throws -> Bool {
        let setting = describe(key, defaultValue ? "on" : "off", nil, summary)
        let configKey = ConfigKey(setting.key)
        if let flag = config.bool(forKey: configKey) { return flag }  // a bare flag, true or false
        guard let text = config.string(forKey: configKey) else { return defaultValue }
        // Every spelling the error names, from a flag's value as from the environment.
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw SettingError(setting, "'\(text)' is not 1, 0, true, false, yes or no")
        }
    }

    mutating func int(
        _ key: String, default defaultValue: Int, unit: String? = nil, minimum: Int = 0, maximum: Int = .max,
        _ summary: String
    ) throws -> Int {
        let setting = describe(key, String(defaultValue), unit, summary)
        return try checked(
            setting, try value(setting, "an integer") { config.int(forKey: $0) }, minimum, maximum: maximum)
            ?? defaultValue
    }

    /// An integer that has no default: unset is `nil` (`defaultText` says what that means).
    mutating func optionalInt(
        _ key: String, whenUnset defaultText: String, unit: String? = nil, minimum: Int = 0, _ summary: String
    ) throws -> Int? {
        let setting = describe(key, defaultText, unit, summary)
        return try checked(setting, try value(setting, "an integer") { config.int(forKey: $0) }, minimum)
    }

    mutating func number(_ key: String, default defaultValue: Double, unit: String? = nil, _ summary: String) throws
        -> Double
    {
        let setting = describe(key, Self.text(defaultValue), unit, summary)
        guard let number = try value(setting, "a number", { config.double(forKey: $0) }) else { return defaultValue }
        guard number.isFinite, number >= 0 else { throw SettingError(setting, "must be a number ≥ 0") }
        return number
    }

    /// A duration given as a (possibly fractional) number of seconds.
    mutating func seconds(_ key: String, default defaultValue: Duration, minimum: Duration = .zero, _ summary: String)
        throws -> Duration
    {
        let setting = describe(key, Self.text(defaultValue / .seconds(1)), "seconds", summary)
        guard let seconds = try value(setting, "a number of seconds", { config.double(forKey: $0) }) else {
            return defaultValue
        }
        guard seconds.isFinite, seconds <= 1e9, Duration.seconds(seconds) >= minimum else {
            throw SettingError(setting, "must be at least \(Self.text(minimum / .seconds(1))) seconds")
        }
        return .seconds(seconds)
    }

    /// A duration given as a whole number of milliseconds.
    mutating func milliseconds(_ key: String, default defaultValue: Duration, _ summary: String) throws -> Duration {
        let setting = describe(key, String(defaultValue.wholeMilliseconds), "milliseconds", summary)
        guard let milliseconds = try value(setting, "a whole number of milliseconds", { config.int(forKey: $0) })
        else { return defaultValue }
        return .milliseconds(try checked(setting, milliseconds, 0) ?? 0)
    }

    private func checked(_ setting: Setting, _ value: Int?, _ minimum: Int, maximum: Int = .max) throws -> Int? {
        guard let value else { return nil }
        guard value >= minimum else { throw SettingError(setting, "must be at least \(minimum), found \(value)") }
        guard value <= maximum else { throw SettingError(setting, "must be at most \(maximum), found \(value)") }
        return value
    }

    /// `0.2`, `30` (no trailing `.0`).
    static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
