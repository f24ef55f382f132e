import Synchronization
package import TipSyncServerBasics
package import TipSyncStorage

/// Tells the devices connected to an account (live streams and long-polls) that its log grew, and
/// ends their waits when their credentials are revoked or their account is erased.
/// Notifications carry no data: a long-poll or a notify-only stream learns "there is news" and
/// pulls (like Replicache's poke); a stream that carries changes reads the page the account's
/// streams share (``livePages``).
package final class ChangeNotifier: Sendable {
    private struct Subscriber {
        var device: DeviceIdentity
        var sink: Sink

        /// A long-poll waits for news; a live stream also gets heartbeats.
        enum Sink {
            case news(AsyncStream<Void>.Continuation)
            case live(LiveSubscription)

            var isLive: Bool {
                if case .live = self { return true }
                return false
            }

            func yieldChanges() {
                switch self {
                case .news(let continuation): continuation.yield()
                case .live(let subscription): subscription.changes()
                }
            }
        }

        var isLive: Bool { sink.isLive }

        func finish() {
            switch sink {
            case .news(let continuation): continuation.finish()
            case .live(let subscription): subscription.finish()
            }
        }
    }

    private struct Subscribers {
        var next: UInt64 = 0
        var byAccount: [Int64: [UInt64: Subscriber]] = [:]
    }

    private let subscribers = Mutex(Subscribers())
    /// Who waits for a number of open streams (``waitForOpenStreams(_:)``).
    private let openWaiters = Mutex<[(count: Int, continuation: CheckedContinuation<Void, Never>)]>([])
    /// The uploaded catalog's version as this instance knows it (every pull answer names it).
    package let catalogVersion = CatalogVersion()
    /// The pages live streams that carry changes share (one read per account and news).
    package let livePages: LivePages

    /// `livePages`: tests give theirs a clock of their own.
    package init(livePages: LivePages = LivePages()) {
        self.livePages = livePages
    }

    /// A stream that yields whenever the device's account's log grows, until dropped, or until
    /// the device is revoked or its account erased (the stream finishes then).
    package func subscribe(_ device: DeviceIdentity) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let remove = register(device, .news(continuation))
        continuation.onTermination = { _ in remove() }
        return stream
    }

    /// A live stream's subscription: wakes on news and on every ``heartbeat()``; ends like
    /// ``subscribe(_:)`` or when finished. No task runs for it, so an idle live connection costs
    /// only what its connection costs.
    ///
    /// A device holds at most `limit` live streams: subscribing one more ends its oldest, so what one
    /// device's streams can hold in memory is bounded (a device that lost a connection without the
    /// server noticing reconnects at once, and the stale one goes).
    package func subscribeLive(_ device: DeviceIdentity, limit: Int = .max) -> LiveSubscription {
        let subscription = LiveSubscription { [weak self] in self?.streamOpened() }
        let remove = register(device, .live(subscription))
        subscription.onTermination { remove() }
        endOldestLiveStreams(of: device, keeping: limit)
        return subscription
    }

    /// Ends the device's oldest live streams beyond `limit` (``subscribeLive(_:limit:)`` does, or,
    /// for a stream whose credential is confirmed only by its first read, the route once it is).
    package func endOldestLiveStreams(of device: DeviceIdentity, keeping limit: Int) {
        guard limit < .max else { return }
        for oldest in liveStreams(of: device).dropLast(max(0, limit)) { oldest.evict() }
    }

    /// The device's live streams, oldest first.
    private func liveStreams(of device: DeviceIdentity) -> [LiveSubscription] {
        subscribers.withLock { state in
            (state.byAccount[device.accountID] ?? [:]).filter { $0.value.device == device && $0.value.isLive }
                .sorted { $0.key < $1.key }
                .compactMap { entry -> LiveSubscription? in
                    if case .live(let subscription) = entry.value.sink { return subscription }
                    return nil
                }
        }
    }

    /// Adds a subscriber; returns what removes it.
    private func register(_ device: DeviceIdentity, _ sink: Subscriber.Sink) -> @Sendable () -> Void {
        let account = device.accountID
        let id = subscribers.withLock { state in
            let id = state.next
            state.next += 1
            state.byAccount[account, default: [:]][id] = Subscriber(device: device, sink: sink)
            return id
        }
        return { [weak self] in
            self?.subscribers.withLock { state in
                state.byAccount[account]?[id] = nil
                if state.byAccount[account]?.isEmpty == true { state.byAccount[account] = nil }
            }
            self?.forgetPagesIfUnwatched(account: account)
        }
    }

    /// The account's log grew: long-polls answer, live streams write. `primed`: the entries this
    /// instance's push appended and where they start, written to streams at the end of the log before
    /// them without a store read; built only when the account has a live stream to write them to.
    package func notify(account: Int64, primed: () -> (after: Int64, page: LivePages.Page)? = { nil }) {
        // Only the sinks leave the lock: a thousand streams of one account are a thousand wake-ups
        // per push, and copying each subscriber's device would add its strings' retains to each.
        let sinks = subscribers.withLock { $0.byAccount[account].map { $0.values.map(\.sink) } ?? [] }
        if sinks.isEmpty {
            livePages.forget(account: account)
        } else {
            livePages.news(account: account, primed: sinks.contains(where: \.isLive) ? primed() : nil)
        }
        for sink in sinks { sink.yieldChanges() }
    }

    /// Drops the account's shared live page once no stream or long-poll of it is left.
    private func forgetPagesIfUnwatched(account: Int64) {
        if subscribers.withLock({ $0.byAccount[account] == nil }) { livePages.forget(account: account) }
    }

    /// Wakes every live stream for a heartbeat (``LiveHeartbeat`` calls it; long-polls sleep on).
    package func heartbeat() {
        let live = subscribers.withLock { state in
            state.byAccount.values.flatMap(\.values).compactMap { subscriber -> LiveSubscription? in
                if case .live(let subscription) = subscriber.sink { return subscription }
                return nil
            }
        }
        for subscription in live { subscription.heartbeat() }
    }

    /// Reacts to an event announced by any instance on the database (or by this one).
    package func handle(_ event: StoreEvent) {
        switch event {
        case .changes(let account): notify(account: account)
        case .revoked(let account, let device): end(account: account) { $0.device.utf8.elementsEqual(device.utf8) }
        case .erased(let account): end(account: account) { _ in true }
        case .catalog: catalogChanged()
        case .watching:
            catalogVersion.invalidate()
            endAll()
        }
    }

    /// A new catalog: every long-poll answers (its page names the new version) and every live stream
    /// writes `event: catalog`, on every account.
    private func catalogChanged() {
        catalogVersion.invalidate()
        let all = subscribers.withLock { $0.byAccount.values.flatMap(\.values) }
        for subscriber in all {
            switch subscriber.sink {
            case .news(let continuation): continuation.yield()
            case .live(let subscription): subscription.catalogChanged()
            }
        }
    }

    private func end(account: Int64, where matches: (DeviceIdentity) -> Bool) {
        let ending = subscribers.withLock { state in
            (state.byAccount[account] ?? [:]).values.filter { matches($0.device) }
        }
        for subscriber in ending { subscriber.finish() }
    }

    /// Ends every stream and long-poll; each removes itself when it ends.
    private func endAll() {
        let all = subscribers.withLock { $0.byAccount.values.flatMap(\.values) }
        for subscriber in all { subscriber.finish() }
    }

    /// Ends every stream (graceful shutdown).
    package func finishAll() {
        let all = subscribers.withLock { state in
            let all = state.byAccount.values.flatMap(\.values)
            state.byAccount = [:]
            return all
        }
        for subscriber in all { subscriber.finish() }
    }

    /// The devices of the account holding a live stream or long-poll open on this instance.
    package func liveDevices(account: Int64) -> Set<DeviceIdentity> {
        subscribers.withLock { Set(($0.byAccount[account] ?? [:]).values.map(\.device)) }
    }

    /// Live streams that have written their opening and wait for news (tests: a push after this
    /// reaches them as news, not in their opening page).
    package var openStreams: Int {
        let live = subscribers.withLock { state in
            state.byAccount.values.flatMap(\.values).compactMap { subscriber -> LiveSubscription? in
                if case .live(let subscription) = subscriber.sink { return subscription }
                return nil
            }
        }
        return live.filter(\.isListening).count
    }

    /// Returns once at least `count` live streams have opened (``openStreams``), without polling:
    /// tests wait here before a push that must reach streams as news.
    package func waitForOpenStreams(_ count: Int) async {
        await withCheckedContinuation { continuation in
            openWaiters.withLock { $0.append((count, continuation)) }
            streamOpened()
        }
    }

    /// A stream opened (or a waiter arrived): resumes the waiters whose count is reached.
    private func streamOpened() {
        // Every stream's opening comes here: count only when a test waits.
        guard openWaiters.withLock({ !$0.isEmpty }) else { return }
        let open = openStreams
        let ready = openWaiters.withLock { waiters in
            let ready = waiters.filter { $0.count <= open }
            waiters.removeAll { $0.count <= open }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Connected subscribers, for metrics and tests.
    package var count: Int { subscribers.withLock { $0.byAccount.values.reduce(0) { $0 + $1.count } } }
}
