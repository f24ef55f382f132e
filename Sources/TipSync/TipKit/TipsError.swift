/// Errors from the ``Tips`` facade.
public struct TipsError: Error, Equatable, CustomStringConvertible, Sendable {
    private enum Code: Equatable, Sendable {
        case alreadyConfigured
        case notConfigured
        case syncNotConfigured
    }

    private let code: Code

    /// `Tips.configure` was called a second time.
    public static let alreadyConfigured = TipsError(code: .alreadyConfigured)
    /// A tip operation ran before `Tips.configure`.
    public static let notConfigured = TipsError(code: .notConfigured)
    /// `Tips.syncNow()` was called without `.sync(…)` in `Tips.configure`.
    public static let syncNotConfigured = TipsError(code: .syncNotConfigured)

    public var description: String {
        switch code {
        case .alreadyConfigured: "Tips.configure was already called in this process"
        case .notConfigured: "call Tips.configure before using tips"
        case .syncNotConfigured: "Tips.configure was called without .sync(…): there is no server to push to"
        }
    }
}
