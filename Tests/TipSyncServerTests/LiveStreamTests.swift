import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncServer

@Suite struct LiveStreamTests {
    @Test func serverSentEventsAnnounceNewChanges() async throws {
        let fixture = try await ServerFixture.make()
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            let stream = Task {
                try await client.execute(uri: "/v1/live", method: .get, headers: fixture.headers("laptop")) {
                    response in
                    (response.status, response.headers[.contentType], String(buffer: response.body))
                }
            }
            // Wait (without sleeping) until the stream has subscribed.
            while notifier.count == 0 { await Task.yield() }
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: [change("phone", 1, .datastoreReset)]))
            ) { #expect($0.status == .ok) }
            // The server shutting down closes live streams cleanly.
            notifier.finishAll()
            let (status, contentType, text) = try await stream.value
            #expect(status == .ok)
            #expect(contentType == "text/event-stream")
            #expect(text.hasPrefix("event: ready\n"))
            #expect(text.contains("event: changes\ndata: {}\n\n"))
        }
    }

    @Test func aLongPollReturnsAsSoonAsAnotherDevicePushes() async throws {
        let fixture = try await ServerFixture.make()
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            let poll = Task {
                try await client.execute(uri: "/v1/pull?wait=30", method: .get, headers: fixture.headers("laptop")) {
                    try decode(PullResponse.self, $0.body)
                }
            }
            while notifier.count == 0 { await Task.yield() }
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: [change("phone", 1, .parameter(id: "p", value: .int(1)))]))
            ) { #expect($0.status == .ok) }
            let page = try await poll.value
            #expect(page.changes.count == 1)
        }
    }
}
