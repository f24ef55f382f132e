import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSync
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Every request but monitoring is admitted a few hundred at a time and answered in a task of its
/// own (``AdmittedResponder``, ``RequestAdmission``): the connection's task keeps the memory its
/// deepest moment needed for as long as the connection stays open, and a storm of devices waiting
/// on the store at once held thousands of those frames.
@Suite struct RequestAdmissionTests {
    /// Which task each layer ran in, per path.
    final class Tasks: Sendable {
        let seen = Mutex<[String: (outer: Int, inner: Int, marker: String?)]>([:])
        /// Paths the base responder began, in order.
        let began = Mutex<[String]>([])
        /// `/block/…` requests wait here until the test yields to them.
        let release: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation) =
            AsyncStream.makeStream()
    }

    @TaskLocal static var marker: String?

    /// Records the calling task, then hands the request to the responder under test.
    struct Outer<Inner: HTTPResponder>: HTTPResponder {
        let inner: Inner
        let tasks: Tasks
        func respond(to request: Request, context: Inner.Context) async throws -> Response {
            let outer = withUnsafeCurrentTask { $0?.hashValue ?? 0 }
            return try await RequestAdmissionTests.$marker.withValue("set above") {
                let response = try await inner.respond(to: request, context: context)
                tasks.seen.withLock { $0[request.uri.path]?.outer = outer }
                return response
            }
        }
    }

    /// Records the task the router's work runs in; a `/block/…` request waits for the test.
    struct Base: HTTPResponder {
        typealias Context = BasicRequestContext
        let tasks: Tasks
        func respond(to request: Request, context: Context) async throws -> Response {
            let inner = withUnsafeCurrentTask { $0?.hashValue ?? 0 }
            let marker = RequestAdmissionTests.marker
            tasks.seen.withLock { $0[request.uri.path] = (outer: 0, inner: inner, marker: marker) }
            tasks.began.withLock { $0.append(request.uri.path) }
            if request.uri.path.hasPrefix("/block") {
                var iterator = tasks.release.stream.makeAsyncIterator()
                _ = await iterator.next()
            }
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            return Response(status: .ok, body: .init(byteBuffer: body))
        }
    }

    @Test func everyRequestButMonitoringRunsInATaskOfItsOwnThatSeesTheCallersTaskLocals() async throws {
        let tasks = Tasks()
        let admission = RequestAdmission(limit: 4)
        let app = Application(
            responder: Outer(inner: AdmittedResponder(base: Base(tasks: tasks), admission: admission), tasks: tasks))
        try await app.test(.router) { client in
            for path in ["/v1/live", "/v1/pull", "/v1/push", "/health", "/ready", "/metrics"] {
                try await client.execute(
                    uri: path, method: path == "/v1/push" ? .post : .get,
                    body: path == "/v1/push" ? ByteBuffer(string: "{\"changes\":[]}") : nil
                ) { response in
                    #expect(response.status == .ok)
                    // The body read before admission reaches the route whole.
                    if path == "/v1/push" { #expect(String(buffer: response.body) == "{\"changes\":[]}") }
                }
            }
        }
        let seen = tasks.seen.withLock { $0 }
        for path in ["/v1/live", "/v1/pull", "/v1/push"] {
            let record = try #require(seen[path])
            #expect(record.outer != 0 && record.inner != 0 && record.outer != record.inner, "\(path)")
        }
        // A load balancer's and a scraper's questions are answered in place.
        for path in ["/health", "/ready", "/metrics"] {
            #expect(seen[path].map { $0.outer == $0.inner } == true, "\(path)")
        }
        // Task-local values (the request's logger among them) reach the handler either way.
        #expect(seen.values.allSatisfy { $0.marker == "set above" })
        // Every place was given back.
        #expect(admission.inFlight == 0 && admission.waiting == 0)
    }

    @Test func beyondTheLimitRequestsWaitTheirTurnInOrderAndMonitoringNever() async throws {
        let tasks = Tasks()
        let admission = RequestAdmission(limit: 1)
        let app = Application(
            responder: AdmittedResponder(base: Base(tasks: tasks), admission: admission),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            // A connection each: requests on one connection are served one after another anyway.
            @Sendable func get(_ path: String) async throws -> Int {
                // Bounds for a loaded machine (the whole suite runs at once), not for the server.
                try await RawConnection.exchange(port: port, method: "GET", path: path, within: 120).status
            }
            let blocked = Task { try await get("/block/1") }
            while tasks.began.withLock({ $0.count }) < 1 { await Task.yield() }
            let second = Task { try await get("/v1/second") }
            while admission.waiting < 1 { await Task.yield() }
            let third = Task { try await get("/v1/third") }
            while admission.waiting < 2 { await Task.yield() }
            // The one place is held: monitoring is answered anyway.
            for path in ["/health", "/ready", "/metrics"] {
                #expect(try await get(path) == 200)
            }
            #expect(tasks.began.withLock { $0 } == ["/block/1", "/health", "/ready", "/metrics"])
            tasks.release.continuation.finish()
            #expect(try await blocked.value == 200)
            #expect(try await second.value == 200)
            #expect(try await third.value == 200)
            #expect(
                tasks.began.withLock { $0 } == ["/block/1", "/health", "/ready", "/metrics", "/v1/second", "/v1/third"])
        }
        #expect(admission.inFlight == 0 && admission.waiting == 0)
    }

    @Test func aPlaceGoesToTheRequestThatWaitedLongest() async {
        let admission = RequestAdmission(limit: 2)
        await admission.enter()
        await admission.enter()
        let tasks = Tasks()
        let first = Task {
            await admission.enter()
            tasks.began.withLock { $0.append("first") }
        }
        while admission.waiting < 1 { await Task.yield() }
        let second = Task {
            await admission.enter()
            tasks.began.withLock { $0.append("second") }
        }
        while admission.waiting < 2 { await Task.yield() }
        admission.leave()
        await first.value
        #expect(tasks.began.withLock { $0 } == ["first"])
        #expect(admission.inFlight == 2 && admission.waiting == 1)
        admission.leave()
        await second.value
        #expect(tasks.began.withLock { $0 } == ["first", "second"])
        admission.leave()
        admission.leave()
        #expect(admission.inFlight == 0 && admission.waiting == 0)
    }

    @Test func aRequestThatStepsAsideLetsAnotherInAndTakesAPlaceAgainAfter() async throws {
        let admission = RequestAdmission(limit: 1)
        await admission.enter()
        try await RequestAdmission.$held.withValue(admission) {
            try await RequestAdmission.stepAside { () async throws in
                // The place is free while this waits: another request is admitted and done.
                await admission.enter()
                #expect(admission.inFlight == 1)
                admission.leave()
            }
            #expect(admission.inFlight == 1)
            // An error thrown while aside is rethrown, with the place taken again.
            await #expect(throws: CancellationError.self) {
                try await RequestAdmission.stepAside { () async throws in throw CancellationError() }
            }
            #expect(admission.inFlight == 1)
        }
        admission.leave()
        // Outside an admitted request it only runs its body.
        #expect(await RequestAdmission.stepAside { 7 } == 7)
        #expect(admission.inFlight == 0)
    }

    // A long-poll waiting for news lets a push in with one place:
    // `LiveStreamTests.aLongPollReturnsAsSoonAsAnotherDevicePushes`.

    @Test func aBodySentSlowlyDoesNotKeepAnotherDeviceOut() async throws {
        let fixture = try await ServerFixture.make()
        var configuration = ServerConfiguration()
        configuration.requestsInFlight = 1
        // Far beyond the pull's bound below: only reading the body before admission lets the pull in.
        configuration.requestBodyTimeout = .seconds(600)
        let server = try await LiveServer.start(store: fixture.store, configuration: configuration)
        do {
            let push = Array(
                try JSONCoding.encoder.encode(
                    PushRequest(changes: [change("phone", 1, .parameter(id: "p", value: .int(1)))])))
            let slow = try await offPool { try RawConnection(port: server.port) }
            let head =
                "POST /v1/push HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(fixture.tokens["phone"]!)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(push.count)\r\n\r\n"
            #expect(slow.send(bytes: Array(head.utf8) + push.prefix(10)))
            // The other device is served while the push's body is still on its way.
            let (status, _) = try await RawConnection.exchange(
                port: server.port, method: "GET", path: "/v1/pull",
                headers: ["Authorization": "Bearer \(fixture.tokens["laptop"]!)"], within: 120)
            #expect(status == 200)
            #expect(slow.send(bytes: Array(push.dropFirst(10))))
            let answers = await slow.readResponses(1, within: 120)
            #expect(answers.first?.status == 200)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
