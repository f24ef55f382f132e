public import Foundation

/// A tip option (`var options: [Option]`).
public protocol TipOption: Sendable {
    /// Applies the option to a tip's data form.
    func apply(to options: inout TipOptions)
}

extension Tips {
    /// After `count` displays (summed over every device) the tip is invalidated with `.displayCountExceeded`.
    public struct MaxDisplayCount: TipOption {
        public let count: Int
        public init(_ count: Int) { self.count = count }
        public func apply(to options: inout TipOptions) { options.maxDisplayCount = count }
    }

    /// After `seconds` on screen (cumulative, over every device) the tip is invalidated with `.displayDurationExceeded`.
    public struct MaxDisplayDuration: TipOption {
        public let seconds: TimeInterval
        public init(_ seconds: TimeInterval) { self.seconds = seconds }
        public func apply(to options: inout TipOptions) { options.maxDisplayDuration = seconds }
    }

    /// Whether the tip bypasses the app-wide display frequency.
    public struct IgnoresDisplayFrequency: TipOption {
        public let ignores: Bool
        public init(_ ignores: Bool) { self.ignores = ignores }
        public func apply(to options: inout TipOptions) { options.ignoresDisplayFrequency = ignores }
    }

    /// A button on a tip. `id` defaults to the action's index.
    public struct Action: Sendable, Identifiable {
        public let id: String?
        public let title: String
        public let perform: @Sendable () -> Void

        public init(id: String? = nil, title: String, perform: @escaping @Sendable () -> Void = {}) {
            self.id = id
            self.title = title
            self.perform = perform
        }

        public func callAsFunction() { perform() }
    }
}
