/// A last-writer-wins register's content: a value and the stamp of the write that set it.
public struct Versioned<Value: Sendable & Hashable>: Sendable, Hashable {
    public var value: Value
    public var stamp: Stamp

    public init(value: Value, stamp: Stamp) {
        self.value = value
        self.stamp = stamp
    }

    /// Last writer wins: the write with the larger (HLC, device) stamp.
    public static func merge(_ current: Versioned?, _ incoming: Versioned) -> Versioned {
        guard let current, incoming.stamp <= current.stamp else { return incoming }
        return current
    }
}
