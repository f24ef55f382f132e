import Synchronization

/// Tells the devices connected to an account (live streams and long-polls) that its log grew.
/// Notifications carry no data: a device learns "there is news" and pulls (like Replicache's poke).
public final class ChangeNotifier: Sendable {
    private struct Subscribers {
        var next: UInt64 = 0
        var byAccount: [Int64: [UInt64: AsyncStream<Void>.Continuation]] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    public init() {}

    /// A stream that yields whenever the account's log grows, until dropped.
    public func subscribe(account: Int64) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = subscribers.withLock { state in
            let id = state.next
            state.next += 1
            state.byAccount[account, default: [:]][id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { state in
                state.byAccount[account]?[id] = nil
                if state.byAccount[account]?.isEmpty == true { state.byAccount[account] = nil }
            }
        }
        return stream
    }

    public func notify(account: Int64) {
        let continuations = subscribers.withLock { Array(($0.byAccount[account] ?? [:]).values) }
        for continuation in continuations { continuation.yield() }
    }

    /// Ends every stream (graceful shutdown).
    public func finishAll() {
        let continuations = subscribers.withLock { state in
            let all = state.byAccount.values.flatMap(\.values)
            state.byAccount = [:]
            return all
        }
        for continuation in continuations { continuation.finish() }
    }

    /// Connected subscribers, for metrics and tests.
    public var count: Int { subscribers.withLock { $0.byAccount.values.reduce(0) { $0 + $1.count } } }
}
