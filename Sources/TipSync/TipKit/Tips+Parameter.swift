import Foundation

extension Tips {
    /// Options for `@Parameter`.
    public enum ParameterOption: Sendable, Hashable {
        /// Reset to the default at each launch; never stored or synced.
        case transient
    }

    /// A parameter rules can depend on; what `@Parameter` creates as `$name`.
    ///
    /// Values are stored as JSON in the replica and synced (last writer wins), unless transient.
    public struct Parameter<Value: Codable & Sendable>: Sendable {
        public let id: String
        public let defaultValue: Value
        public let isTransient: Bool

        public init(id: String, defaultValue: Value, options: [ParameterOption] = []) {
            self.id = id
            self.defaultValue = defaultValue
            self.isTransient = options.contains(.transient)
        }

        /// The parameter as data.
        public var definition: ParameterDefinition {
            ParameterDefinition(
                id: id, defaultValue: (try? JSONValue(encoding: defaultValue)) ?? .null, isTransient: isTransient)
        }

        /// The value in the shared replica (the default before `Tips.configure`).
        public var wrappedValue: Value {
            get { Tips.replica.map(value(in:)) ?? defaultValue }
            nonmutating set { Tips.perform { try set(newValue, in: $0) } }
        }

        public func value(in replica: TipsReplica) -> Value {
            replica.register(parameter: definition)
            return (try? replica.parameterValue(id).decode(as: Value.self)) ?? defaultValue
        }

        public func set(_ value: Value, in replica: TipsReplica) throws {
            replica.register(parameter: definition)
            try replica.setParameter(id, to: try JSONValue(encoding: value))
        }
    }
}
