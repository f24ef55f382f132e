/// TipKit's testing overrides. Precedence: shown tips, hidden tips, show all, hide all.
/// Under a show override an invalidated tip reads `.available`, for repeat testing.
public struct TestingOverrides: Sendable, Hashable {
    public var showAll = false
    public var hideAll = false
    public var shown: Set<String> = []
    public var hidden: Set<String> = []

    public init() {}

    /// Environment variables: `TIPSYNC_SHOW_ALL_TIPS=1`, `TIPSYNC_HIDE_ALL_TIPS=1`,
    /// `TIPSYNC_SHOW_TIPS=id1,id2`, `TIPSYNC_HIDE_TIPS=id1,id2`.
    public init(environment: [String: String]) {
        func flag(_ name: String) -> Bool { ["1", "true", "yes"].contains(environment[name]?.lowercased() ?? "") }
        func list(_ name: String) -> Set<String> {
            Set(
                (environment[name] ?? "").split(separator: ",").map { String($0).trimmingWhitespace() }.filter {
                    !$0.isEmpty
                })
        }
        showAll = flag("TIPSYNC_SHOW_ALL_TIPS")
        hideAll = flag("TIPSYNC_HIDE_ALL_TIPS")
        shown = list("TIPSYNC_SHOW_TIPS")
        hidden = list("TIPSYNC_HIDE_TIPS")
    }

    /// The forced status for `tip`, or `nil` when no override applies.
    public func status(for tip: String) -> TipStatus? {
        if shown.contains(tip) { return .available }
        if hidden.contains(tip) { return .pending }
        if showAll { return .available }
        if hideAll { return .pending }
        return nil
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
