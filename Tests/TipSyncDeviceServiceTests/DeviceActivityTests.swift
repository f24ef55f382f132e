import Foundation
import Testing
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// A device's latest pull position is always readable, in memory or in the store — also while a
/// flush is writing it. (A flush used to take the records out of memory before writing them: a page
/// read in between showed "never pulled"; it failed a CI run of the console tests under load.)
@Suite(.timeLimit(.minutes(5))) struct DeviceActivityTests {
    @Test func aRecordStaysReadableWhileAFlushWritesIt() async throws {
        let fixture = try await ServerFixture.make()
        let store = GatedStore(base: fixture.store, gatesRecordedPulls: true)
        let activity = DeviceActivity()
        let laptop = DeviceIdentity(accountID: fixture.accountID, device: "laptop")
        activity.pulled(laptop, through: 2)
        let flush = Task { try await activity.flush(to: store) }
        await store.waitUntilAPushIsInside()  // the flush is inside recordPulled, not done
        #expect(activity.unwrittenPull(laptop) == 2)
        activity.pulled(laptop, through: 3)  // a newer pull while the flush writes the older one
        store.letPushesThrough()
        _ = try await flush.value
        #expect(activity.unwrittenPull(laptop) == 3, "the newer record waits for the next flush")
        #expect(
            try await fixture.store.accountDetails(name: "alice")?.devices.first { $0.name == "laptop" }?.pulledThrough
                == 2)
        _ = try await activity.flush(to: fixture.store)
        #expect(activity.unwrittenPull(laptop) == nil)
    }

    /// The account page (and `GET /admin/v1/accounts/{account}`) reads memory before the store: a
    /// flush that lands between its two reads leaves the position in what it read. Reading the
    /// store first, a flush in between left it in neither: "never pulled" (the console test that
    /// failed twice in fresh-clone CI runs under load).
    @Test func accountDetailsSeeAPullFlushedWhileTheyAreRead() async throws {
        let fixture = try await ServerFixture.make()
        let store = GatedStore(base: fixture.store, gatesAccountDetails: true)
        let activity = DeviceActivity()
        let admin = AdminController(store: store, notifier: ChangeNotifier(), activity: activity, now: { 0 })
        let laptop = DeviceIdentity(accountID: fixture.accountID, device: "laptop")
        activity.pulled(laptop, through: 2)
        let read = Task { try await admin.currentDetails(name: "alice") }
        await store.waitUntilAPushIsInside()  // the store was read, before the flush
        _ = try await activity.flush(to: fixture.store)
        store.letPushesThrough()
        let details = try #require(try await read.value?.details)
        #expect(details.devices.first { $0.name == "laptop" }?.pulledThrough == 2)
    }
}
