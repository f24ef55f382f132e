import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What SIGTERM does (`tipsync-server serve` runs the application in a `ServiceGroup` that turns
/// SIGTERM into a graceful shutdown): a push already being handled finishes and is answered, live
/// streams end cleanly, and the server stops.
@Suite(.timeLimit(.minutes(5))) struct GracefulShutdownTests {
    @Test func aPushInFlightFinishesAndLiveStreamsCloseCleanly() async throws {
        let fixture = try await ServerFixture.make()
        let store = GatedStore(base: fixture.store)
        let notifier = ChangeNotifier()
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = buildApplication(
            configuration: .test,
            dependencies: ServerDependencies(
                store: store, notifier: notifier,
                onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) }))
        let group = ServiceGroup(
            configuration: .init(services: [app], logger: Logger(label: "graceful-shutdown-test")))
        let server = Task { try await group.run() }

        var portIterator = ports.makeAsyncIterator()
        let port = try #require(await portIterator.next())
        let base = URL(string: "http://127.0.0.1:\(port)")!
        let session = URLSession(configuration: .ephemeral)

        // A live stream, open until the server goes away.
        var liveRequest = URLRequest(url: base.appendingPathComponent("v1/live"))
        liveRequest.setValue("Bearer \(fixture.tokens["laptop"]!)", forHTTPHeaderField: "Authorization")
        let live = Task { try await session.data(for: liveRequest) }
        while notifier.count == 0 { await Task.yield() }

        // A push, held inside the store until shutdown has begun.
        var pushRequest = URLRequest(url: base.appendingPathComponent("v1/push"))
        pushRequest.httpMethod = "POST"
        pushRequest.setValue("Bearer \(fixture.tokens["phone"]!)", forHTTPHeaderField: "Authorization")
        pushRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        pushRequest.httpBody = try JSONCoding.encoder.encode(
            PushRequest(changes: [
                change("phone", 1, .eligibility(tip: "t", state: .invalidated(.tipClosed))),
                change("phone", 2, .parameter(id: "p", value: .int(2))),
            ]))
        let push = Task { try await session.data(for: pushRequest) }
        await store.waitUntilAPushIsInside()

        await group.triggerGracefulShutdown()
        store.letPushesThrough()

        // The push is answered in full, and committed.
        let (pushBody, pushResponse) = try await push.value
        #expect((pushResponse as? HTTPURLResponse)?.statusCode == 200)
        let outcome = try JSONCoding.decode(PushResponse.self, from: pushBody)
        #expect(outcome.accepted == 2 && outcome.highestSeq == 2)
        // The live stream ends as a stream should (no reset, no error) after its first event.
        let (liveBody, liveResponse) = try await live.value
        #expect((liveResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: liveBody, as: UTF8.self).hasPrefix("event: ready\n"))
        // And the server stops by itself.
        try await server.value
        #expect(try await fixture.store.logCount(account: fixture.accountID) == 2)
        #expect(try await fixture.store.highestSeq(account: fixture.accountID, device: "phone") == 2)
    }
}
