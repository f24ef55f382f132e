import Synchronization

/// Tells the devices connected to an account (live streams and long-polls) that its log grew, and
/// ends their waits when their credentials are revoked or their account is erased.
/// Notifications carry no data: a device learns "there is news" and pulls (like Replicache's poke).
public final class ChangeNotifier: Sendable {
    private struct Subscriber {
        var device: DeviceIdentity
        var continuation: AsyncStream<Void>.Continuation
    }

    private struct Subscribers {
        var next: UInt64 = 0
        var byAccount: [Int64: [UInt64: Subscriber]] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    public init() {}

    /// A stream that yields whenever the device's account's log grows, until dropped, or until
    /// the device is revoked or its account erased (the stream finishes then).
    public func subscribe(_ device: DeviceIdentity) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let account = device.accountID
        let id = subscribers.withLock { state in
            let id = state.next
            state.next += 1
            state.byAccount[account, default: [:]][id] = Subscriber(device: device, continuation: continuation)
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
        let continuations = subscribers.withLock { ($0.byAccount[account] ?? [:]).values.map(\.continuation) }
        for continuation in continuations { continuation.yield() }
    }

    /// Reacts to an event announced by any instance on the database (or by this one).
    public func handle(_ event: StoreEvent) {
        switch event {
        case .changes(let account): notify(account: account)
        case .revoked(let account, let device): end(account: account) { $0.device.utf8.elementsEqual(device.utf8) }
        case .erased(let account): end(account: account) { _ in true }
        case .watching: endAll()
        }
    }

    private func end(account: Int64, where matches: (DeviceIdentity) -> Bool) {
        let continuations = subscribers.withLock { state in
            (state.byAccount[account] ?? [:]).values.filter { matches($0.device) }.map(\.continuation)
        }
        for continuation in continuations { continuation.finish() }
    }

    /// Ends every stream and long-poll; each removes itself when it ends.
    private func endAll() {
        let continuations = subscribers.withLock { $0.byAccount.values.flatMap(\.values).map(\.continuation) }
        for continuation in continuations { continuation.finish() }
    }

    /// Ends every stream (graceful shutdown).
    public func finishAll() {
        let continuations = subscribers.withLock { state in
            let all = state.byAccount.values.flatMap(\.values).map(\.continuation)
            state.byAccount = [:]
            return all
        }
        for continuation in continuations { continuation.finish() }
    }

    /// The devices of the account holding a live stream or long-poll open on this instance.
    public func liveDevices(account: Int64) -> Set<DeviceIdentity> {
        subscribers.withLock { Set(($0.byAccount[account] ?? [:]).values.map(\.device)) }
    }

    /// Connected subscribers, for metrics and tests.
    public var count: Int { subscribers.withLock { $0.byAccount.values.reduce(0) { $0 + $1.count } } }
}
