import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport

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

    /// With one request served at a time: a long-poll waiting for news gives its place up
    /// (``RequestAdmission``), else the push would wait the poll's 30 s out and the poll answer empty.
    @Test func aLongPollReturnsAsSoonAsAnotherDevicePushes() async throws {
        let fixture = try await ServerFixture.make()
        let notifier = ChangeNotifier()
        var configuration = ServerConfiguration.test
        configuration.requestsInFlight = 1
        let app = buildApplication(
            configuration: configuration, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
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

/// `GET /v1/live?cursor=…`: the stream carries the changes (protocol.md §9).
@Suite struct LiveChangesTests {
    /// One server-sent event: its name and data.
    struct Event: Equatable {
        var name: String
        var data: String
    }

    static func events(_ text: String) -> [Event] {
        text.components(separatedBy: "\n\n").compactMap { block in
            var name: String?
            var data: [String] = []
            for line in block.split(separator: "\n") {
                if line.hasPrefix("event:") { name = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
                if line.hasPrefix("data:") { data.append(String(line.dropFirst(5).drop { $0 == " " })) }
            }
            return name.map { Event(name: $0, data: data.joined(separator: "\n")) }
        }
    }

    /// The laptop's cursor from a pull without one (where its streams start).
    static func startCursor(_ client: some TestClientProtocol, _ fixture: ServerFixture) async throws -> String {
        try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")) {
            try decode(PullResponse.self, $0.body).cursor
        }
    }

    /// One stream per device at `uri`; each task's value is the stream's whole text once it ends.
    static func openStreams(
        _ client: some TestClientProtocol, _ fixture: ServerFixture, _ devices: [String], _ uri: String
    ) -> [Task<String, any Error>] {
        devices.map { device in
            Task {
                try await client.execute(uri: uri, method: .get, headers: fixture.headers(device)) {
                    String(buffer: $0.body)
                }
            }
        }
    }

    static func pages(_ text: String) throws -> [PullResponse] {
        try events(text).filter { $0.name == "changes" }.map {
            try JSONCoding.decode(PullResponse.self, from: Data($0.data.utf8))
        }
    }

    @Test func theStreamCarriesWhatWasWaitingThenEveryPushInPagesThatChain() async throws {
        let fixture = try await ServerFixture.make()
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            // Three changes before the laptop connects, from where its pull left it (none).
            let start = try await Self.startCursor(client, fixture)
            let waiting = (1...3).map { change("phone", $0, .parameter(id: "p\($0)", value: .int($0))) }
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: waiting))
            ) { #expect($0.status == .ok) }
            let cursor = start.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let stream = Task {
                try await client.execute(
                    uri: "/v1/live?cursor=\(cursor)&limit=2", method: .get, headers: fixture.headers("laptop")
                ) { response in (response.status, String(buffer: response.body)) }
            }
            await notifier.waitForOpenStreams(1)
            for seq in Int64(4)...6 {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                    body: try body(
                        PushRequest(changes: [change("phone", seq, .parameter(id: "p\(seq)", value: .int(1)))]))
                ) { #expect($0.status == .ok) }
            }
            // Every push is in: what the stream holds by then is what a pull from its cursor sees.
            let end = try await client.execute(
                uri: "/v1/pull?cursor=\(cursor)", method: .get, headers: fixture.headers("laptop")
            ) { try decode(PullResponse.self, $0.body) }
            #expect(end.changes.map(\.seq) == [1, 2, 3, 4, 5, 6])
            // Ending the stream still lets it write what the last push's news asked for.
            notifier.finishAll()
            let (status, text) = try await stream.value
            #expect(status == .ok)
            let events = Self.events(text)
            #expect(events.first == Event(name: "ready", data: #"{"cursor":"\#(start)","catalog":null}"#))
            let pages = try Self.pages(text)
            // Pages chain: each continues where the one before ended, starting at the stream's cursor.
            var expectedFrom = start
            for page in pages {
                #expect(page.from == expectedFrom)
                #expect(page.highestSeq == nil)
                #expect(page.generation == end.generation)
                #expect(page.changes.count <= 2)
                #expect(!page.changes.isEmpty)
                expectedFrom = page.cursor
            }
            #expect(pages.flatMap(\.changes) == end.changes)
            #expect(expectedFrom == end.cursor)
            // The first pages (what was waiting, limit 2) said more was coming.
            #expect(pages.first?.more == true)
        }
    }

    @Test func aCursorTheServerCannotHonourIsRefusedBeforeTheStreamBegins() async throws {
        let fixture = try await ServerFixture.make()
        let app = buildApplication(configuration: .test, dependencies: ServerDependencies(store: fixture.store))
        try await app.test(.router) { client in
            for (cursor, code) in [("nonsense", "invalid_cursor"), ("0000000000000000.5", "invalid_cursor")] {
                try await client.execute(
                    uri: "/v1/live?cursor=\(cursor)", method: .get, headers: fixture.headers("laptop")
                ) { response in
                    #expect(response.status == .badRequest)
                    let error = try decode(ErrorBody.self, response.body).error
                    #expect(error.code == code)
                }
            }
            let start = try await Self.startCursor(client, fixture)
            try await client.execute(
                uri: "/v1/live?cursor=\(start)&limit=0", method: .get, headers: fixture.headers("laptop")
            ) { response in
                #expect(response.status == .badRequest)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "invalid_parameter")
            }
        }
    }

    @Test func streamsOfOneAccountShareOneReadAndWriteTheSameBytes() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone", "laptop", "tablet"])
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            let start = try await Self.startCursor(client, fixture)
            let streams = Self.openStreams(client, fixture, ["laptop", "tablet"], "/v1/live?cursor=\(start)")
            await notifier.waitForOpenStreams(2)
            let before = notifier.livePages.reads
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: [change("phone", 1, .datastoreReset)]))
            ) { #expect($0.status == .ok) }
            notifier.finishAll()
            let texts = [try await streams[0].value, try await streams[1].value]
            let pages = texts.map { Self.events($0).filter { $0.name == "changes" } }
            #expect(pages[0].count == 1)
            #expect(pages[0] == pages[1])
            // Two streams at the end of the log, one push: the push's own entries are their page, with
            // no store read at all (the streams' opening reads came before).
            #expect(notifier.livePages.reads - before == 0)
        }
    }

    @Test func streamsBehindTheEndShareOneReadOfTheirPage() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone", "laptop", "tablet"])
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            let start = try await Self.startCursor(client, fixture)
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: [change("phone", 1, .datastoreReset)]))
            ) { #expect($0.status == .ok) }
            // Both streams open one change behind the end: each reads its catch-up page when it opens.
            let streams = Self.openStreams(client, fixture, ["laptop", "tablet"], "/v1/live?cursor=\(start)&limit=1")
            await notifier.waitForOpenStreams(2)
            let before = notifier.livePages.reads
            // A push of two changes: streams with limit 1 cannot take the push's own page whole.
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(
                    PushRequest(changes: [change("phone", 2, .datastoreReset), change("phone", 3, .datastoreReset)]))
            ) { #expect($0.status == .ok) }
            notifier.finishAll()
            let texts = [try await streams[0].value, try await streams[1].value]
            let pages = texts.map { Self.events($0).filter { $0.name == "changes" } }
            #expect(pages[0].count == 3)
            // The opening pages were read by each stream (their serverTime may differ); the two after
            // them are the same bytes on both streams, each read once for both.
            #expect(pages[0].dropFirst() == pages[1].dropFirst())
            #expect(notifier.livePages.reads - before == 2)
        }
    }

    @Test func aCatalogUploadNamesTheNewVersionOnStreamsThatCarryChanges() async throws {
        let fixture = try await ServerFixture.make()
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            let start = try await Self.startCursor(client, fixture)
            let stream = Task {
                try await client.execute(
                    uri: "/v1/live?cursor=\(start)", method: .get, headers: fixture.headers("laptop")
                ) { String(buffer: $0.body) }
            }
            await notifier.waitForOpenStreams(1)
            _ = try await CatalogComposition(fixture.store).putCatalogJSON(#"{"tips":[{"id":"t","title":"T"}]}"#)
            notifier.handle(.catalog)
            notifier.finishAll()
            let catalog = try #require(Self.events(try await stream.value).first { $0.name == "catalog" })
            let tag = try #require(try await notifier.catalogVersion.current(fixture.store))
            #expect(catalog.data == #"{"catalog":"\#(tag.replacingOccurrences(of: "\"", with: "\\\""))"}"#)
        }
    }
}
