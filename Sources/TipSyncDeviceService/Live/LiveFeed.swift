import CoreMetrics
package import Hummingbird
import NIOCore
package import TipSyncServerBasics
package import TipSyncStorage

/// What one live stream that carries changes (`GET /v1/live?cursor=…`) writes: the account's pages
/// after the stream's position, shared with the account's other streams through ``LivePages``, and
/// `event: catalog` naming the uploaded catalog's version (protocol.md §9). A class: every wake-up of
/// every stream reads it, and a reference costs one retain where the fields cost ten.
package final class LiveFeed: Sendable {
    let account: Int64
    let device: DeviceIdentity
    let limit: Int
    let store: any ChangeLogStore & InsightStore
    let notifier: ChangeNotifier
    let activity: DeviceActivity
    let metrics: ServerMetrics
    /// The device's budget for reading the log (``ServerConfiguration/readByteRate``): each page
    /// this stream alone makes the store read is spent from it, and while it is in debt the stream
    /// waits before reading on.
    let readBudget: RateLimiter<DeviceIdentity>
    let now: @Sendable () -> Int64
    /// Waits out the read budget's debt (tests pass one that moves their clock instead).
    let pause: @Sendable (Duration) async throws -> Void

    package init(
        account: Int64, device: DeviceIdentity, limit: Int, store: any ChangeLogStore & InsightStore,
        notifier: ChangeNotifier, activity: DeviceActivity, metrics: ServerMetrics,
        readBudget: RateLimiter<DeviceIdentity>, now: @escaping @Sendable () -> Int64,
        pause: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.account = account
        self.device = device
        self.limit = limit
        self.store = store
        self.notifier = notifier
        self.activity = activity
        self.metrics = metrics
        self.readBudget = readBudget
        self.now = now
        self.pause = pause
    }

    /// Writes every page after `position` (one page when nothing more waits) and returns the position
    /// after the last.
    package func catchUp(after position: Int64, to writer: inout any ResponseBodyWriter) async throws -> Int64 {
        var position = position
        while true {
            // A device whose reads are in debt waits before the next page, unless the page is at hand
            // (pushed, or read for another stream of the account): it costs nothing then.
            while readyPage(after: position) == nil, let wait = readBudget.wait(device, now: now()) {
                try await pause(.seconds(wait))
            }
            let page = try await notifier.livePages.page(account: account, after: position, limit: limit) {
                [store, account, device, limit, readBudget, now, position] in
                let page = try await store.pull(account: account, after: position, limit: limit)
                _ = readBudget.spend(device, cost: Double(page.readBytes), now: now())
                return LivePages.event(page, from: position, serverTime: now())
            }
            try await write(page, to: &writer)
            let before = position
            position = page.cursor
            guard page.more, position > before else { return position }
        }
    }

    /// The page after `position` when it is at hand (a push on this instance handed it over, or
    /// another stream of the account read it): no store read, no wait. `nil` otherwise.
    func readyPage(after position: Int64) -> LivePages.Page? {
        notifier.livePages.ready(account: account, after: position, limit: limit)
    }

    /// Writes a page that has changes (an empty one writes nothing).
    func write(_ page: LivePages.Page, to writer: inout any ResponseBodyWriter) async throws {
        guard page.count > 0 else { return }
        try await writer.write(page.event)
        served(page)
    }

    /// Counts a page as written to the device.
    func served(_ page: LivePages.Page) {
        metrics.changesServed.increment(by: page.count)
        activity.pulled(device, through: page.cursor)
    }

    /// `event: catalog` with the uploaded catalog's version (`{}` when it was removed).
    func catalogEvent() async throws -> ByteBuffer {
        let tag = try await notifier.catalogVersion.current(store)
        let data = tag.map { #"{"catalog":\#(SyncController.quoted($0))}"# } ?? "{}"
        return ByteBuffer(string: "event: catalog\ndata: \(data)\n\n")
    }
}
