import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// `GET /v1/live` is answered in a task of its own (``LiveStreamResponder``): the connection's task
/// keeps the memory its deepest moment needed for as long as the stream stays open, so the router,
/// the middleware and authentication must not run in it. Every other request is answered in place.
@Suite struct LiveStreamResponderTests {
    /// Which task each layer ran in, per path.
    final class Tasks: Sendable {
        let seen = Mutex<[String: (outer: Int, inner: Int, marker: String?)]>([:])
    }

    @TaskLocal static var marker: String?

    /// Records the calling task, then hands the request to the responder under test.
    struct Outer<Inner: HTTPResponder>: HTTPResponder {
        let inner: Inner
        let tasks: Tasks
        func respond(to request: Request, context: Inner.Context) async throws -> Response {
            let outer = withUnsafeCurrentTask { $0?.hashValue ?? 0 }
            return try await LiveStreamResponderTests.$marker.withValue("set above") {
                let response = try await inner.respond(to: request, context: context)
                tasks.seen.withLock { $0[request.uri.path]?.outer = outer }
                return response
            }
        }
    }

    /// Records the task the router's work runs in.
    struct Base: HTTPResponder {
        typealias Context = BasicRequestContext
        let tasks: Tasks
        func respond(to request: Request, context: Context) async throws -> Response {
            let inner = withUnsafeCurrentTask { $0?.hashValue ?? 0 }
            let marker = LiveStreamResponderTests.marker
            tasks.seen.withLock { $0[request.uri.path] = (outer: 0, inner: inner, marker: marker) }
            return Response(status: .ok)
        }
    }

    @Test func aLiveStreamIsAnsweredInATaskOfItsOwnAndEverythingElseInPlace() async throws {
        let tasks = Tasks()
        let app = Application(responder: Outer(inner: LiveStreamResponder(base: Base(tasks: tasks)), tasks: tasks))
        try await app.test(.router) { client in
            for path in ["/v1/live", "/v1/pull", "/v1/push"] {
                try await client.execute(uri: path, method: path == "/v1/push" ? .post : .get) { response in
                    #expect(response.status == .ok)
                }
            }
            // A POST to the stream's path is not a stream.
            try await client.execute(uri: "/v1/live", method: .post) { response in #expect(response.status == .ok) }
        }
        let seen = tasks.seen.withLock { $0 }
        // The POST came last and replaced the GET's record: answered in place.
        #expect(seen["/v1/live"].map { $0.outer == $0.inner } == true)
        #expect(seen["/v1/pull"].map { $0.outer == $0.inner } == true)
        #expect(seen["/v1/push"].map { $0.outer == $0.inner } == true)
        // Task-local values (the request's logger among them) reach the handler either way.
        #expect(seen.values.allSatisfy { $0.marker == "set above" })
    }

    @Test func theStreamsHandlerRunsInAnotherTaskThatSeesTheCallersTaskLocals() async throws {
        let tasks = Tasks()
        let app = Application(responder: Outer(inner: LiveStreamResponder(base: Base(tasks: tasks)), tasks: tasks))
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/live?cursor=0", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
        let live = try #require(tasks.seen.withLock { $0["/v1/live"] })
        #expect(live.outer != 0 && live.inner != 0)
        #expect(live.outer != live.inner)
        #expect(live.marker == "set above")
    }
}
