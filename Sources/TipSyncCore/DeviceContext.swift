/// What targeting reads about the device and its person (protocol.md §13.8): the platform, the app's
/// version, the locale and the account. Local to the device, never synced; each client fills it from
/// its platform (`Locale.current`, the page's `lang`) and the app may set any of it.
public struct DeviceContext: Sendable, Hashable {
    /// Lowercase: `ios`, `ipados`, `macos`, `tvos`, `watchos`, `visionos`, `android`, `web`, `linux`,
    /// `windows`, or what the app names.
    public var platform: String?
    /// The app's version, such as `2.4.1` (compared with `compareVersions`).
    public var appVersion: String?
    /// A BCP 47 language tag, such as `fr-CA` (rules read it in canonical case, ``canonicalLocale(_:)``).
    public var locale: String?
    /// The account's name, as the server knows it (section 6): what `bucket` hashes.
    public var account: String?

    public init(platform: String? = nil, appVersion: String? = nil, locale: String? = nil, account: String? = nil) {
        self.platform = platform
        self.appVersion = appVersion
        self.locale = locale
        self.account = account
    }

    /// A language tag with `-` between subtags and BCP 47's case conventions: the language lowercase,
    /// a four-letter script titlecased, a two-letter region uppercase (`fr_ca` → `fr-CA`,
    /// `zh-hant-tw` → `zh-Hant-TW`), every other subtag lowercase. Subtags are split at `-` and `_`,
    /// empty ones dropped (`fr--ca` → `fr-CA`); "four-letter" and "two-letter" mean ASCII letters.
    public static func canonicalLocale(_ tag: String) -> String {
        let subtags = tag.split(whereSeparator: { $0 == "-" || $0 == "_" })
        return subtags.enumerated().map { index, subtag in
            let asciiLetters = subtag.allSatisfy { $0.isASCII && $0.isLetter }
            if index > 0, subtag.count == 4, asciiLetters {
                return subtag.prefix(1).uppercased() + subtag.dropFirst().lowercased()
            }
            if index > 0, subtag.count == 2, asciiLetters { return subtag.uppercased() }
            return subtag.lowercased()
        }.joined(separator: "-")
    }

    /// The locale's language: its first subtag, lowercased (`fr-CA` → `fr`).
    public var language: String? {
        guard let locale, let first = locale.split(whereSeparator: { $0 == "-" || $0 == "_" }).first else {
            return nil
        }
        return first.lowercased()
    }

    /// What `{"context": name}` reads: `platform`, `appVersion`, `locale`, `language` or `account`;
    /// `null` when unknown or for any other name.
    public func value(_ name: String) -> JSONValue {
        let value: String? =
            switch name {
            case "platform": platform
            case "appVersion": appVersion
            case "locale": locale.map(Self.canonicalLocale).flatMap { $0.isEmpty ? nil : $0 }  // no subtag: no locale
            case "language": language
            case "account": account
            default: nil
            }
        return value.map(JSONValue.string) ?? .null
    }
}
