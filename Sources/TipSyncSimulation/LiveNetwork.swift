import Foundation
public import TipSync
import TipSyncCore

/// Between devices that run the real sync loop (``SyncClient/run()``) and the in-process server,
/// with every point where a device waits under the caller's control — so liveness ("a change made
/// at any moment gets there") is tested on the loop apps run, without sleeping:
///
/// - a **long-poll** is answered at once when the server has news for it; otherwise it is parked
///   until a push lands (as the real server's change notifier wakes it) or ``releaseLongPolls()``
///   ends it empty (its timeout);
/// - a **backoff or `Retry-After` wait** (the client's injected sleep) is parked until
///   ``advance()``;
/// - a **hook** sees every request twice, when sent and once the server has handled it (before the
///   device gets the answer), and may make local changes there or fail the request.
///
/// Every request, park and wake is an event; ``waitUntil(_:)`` re-checks its condition after each.
public actor LiveNetwork {
    /// What a request is, by the protocol's routes (`device`: the first-contact lookup of
    /// `GET /v1/devices/{name}`; `account`: `GET /v1/account`, asked once for rollout buckets).
    public enum RequestKind: String, Sendable, Hashable {
        case push, pull, longPoll, device, account, other
    }

    /// Where a request is when the hook sees it.
    public enum Phase: String, Sendable, Hashable {
        /// Sent, not yet handled by the server.
        case sent
        /// Handled by the server (a push is stored); the device has not had the answer yet.
        case handled
    }

    /// What the hook lets happen to a request at ``Phase/sent``.
    public enum Verdict: Sendable {
        /// The server handles it.
        case deliver
        /// It never reaches the server: the device sees this error.
        case fail(SyncClientError)
        /// The server never sees it; the device gets this answer instead.
        case answer(SyncHTTPResponse)
        /// The server handles it, and the answer is lost on the way back.
        case loseAnswer
    }

    /// Sees each request at both phases; its verdict counts at ``Phase/sent`` only.
    public typealias Hook = @Sendable (_ request: Exchange, _ phase: Phase) async -> Verdict

    /// One request as the network saw it.
    public struct Exchange: Sendable, Hashable, CustomStringConvertible {
        /// Requests are numbered in the order they were sent, from 0.
        public var index: Int
        public var device: String
        public var kind: RequestKind
        /// The highest sequence number in a push body.
        public var pushedThrough: Int64?
        /// The answer's status; `nil` while unanswered or when no answer reached the device.
        public var status: Int?

        public var description: String {
            "#\(index) \(device) \(kind.rawValue)\(pushedThrough.map { "≤\($0)" } ?? "") → \(status.map(String.init) ?? "none")"
        }
    }

    public let server: SimulatedServer
    var hook: Hook?
    /// Every request so far, by index.
    public private(set) var exchanges: [Exchange] = []
    /// Whether the server is down: requests fail as unreachable, parked long-polls end so.
    public private(set) var serverIsDown = false
    /// Bumped by every push the server stores: a long-poll parks only if none landed since its check.
    var pushesStored = 0
    /// Parked long-polls and sleeps, by id.
    var parked: [Parking: [Int: (device: String, continuation: CheckedContinuation<Bool, Never>)]] = [:]
    var nextParking = 0
    /// Backoff and `Retry-After` waits each device asked for, in order.
    public private(set) var sleeps: [String: [Duration]] = [:]
    var events = 0
    var waiters: [CheckedContinuation<Void, Never>] = []

    public init(server: SimulatedServer) {
        self.server = server
    }

    /// Replaces the hook (`nil`: deliver everything).
    public func setHook(_ hook: Hook?) {
        self.hook = hook
    }

    /// Takes the server down (every request unreachable, parked long-polls end) or brings it back.
    public func setServerDown(_ down: Bool) {
        serverIsDown = down
        if down { wake(.longPoll) }
        noteEvent()
    }

    /// Ends every parked long-poll with an empty answer, as its timeout would.
    public func releaseLongPolls() {
        wake(.longPoll)
        noteEvent()
    }

    /// Lets every parked backoff or `Retry-After` wait end: time passes.
    public func advance() {
        wake(.sleep)
        noteEvent()
    }

    /// Devices with a long-poll parked, or a wait parked, now.
    public var devicesInLongPoll: Set<String> { Set((parked[.longPoll] ?? [:]).values.map(\.device)) }
    public var devicesAsleep: Set<String> { Set((parked[.sleep] ?? [:]).values.map(\.device)) }
    /// Requests sent and not answered yet (parked long-polls included).
    public var requestsInFlight: Int { exchanges.count - answered }
    var answered = 0

    /// One consistent reading of where every device waits, with the event count it was taken at
    /// (read again after looking at the devices: unchanged means nothing moved in between).
    public struct Reading: Sendable, Hashable {
        public var inLongPoll: Set<String>
        public var asleep: Set<String>
        public var requestsInFlight: Int
        public var events: Int
    }

    public var reading: Reading {
        Reading(
            inLongPoll: devicesInLongPoll, asleep: devicesAsleep, requestsInFlight: requestsInFlight, events: events)
    }

    /// How many events (requests sent or answered, parks, wakes) there have been.
    public var eventCount: Int { events }

    /// Returns once `condition` holds. Checked now and after every event (a request sent or
    /// answered, a long-poll or wait parked or woken); each check sees every event before it.
    /// Returns early when the calling task is cancelled (a test's time limit), so a condition that
    /// never holds fails the test instead of hanging it.
    public func waitUntil(_ condition: @Sendable () async -> Bool) async {
        while !Task.isCancelled {
            let seen = events
            if await condition() { return }
            if events == seen, !Task.isCancelled {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { waiters.append($0) }
                } onCancel: {
                    Task { await self.noteEvent() }
                }
            }
        }
    }

    /// The transport of `device`: its requests go through this network.
    public nonisolated func transport(for device: String) -> some SyncTransport {
        LiveTransport(network: self, device: device)
    }

    /// The sleep `device`'s client waits with: parked until ``advance()``.
    public nonisolated func sleep(for device: String) -> @Sendable (Duration) async throws -> Void {
        { [self] duration in try await self.park(device, sleeping: duration) }
    }

    // MARK: Delivery

    func send(_ request: SyncHTTPRequest, from device: String) async throws -> SyncHTTPResponse {
        let index = exchanges.count
        exchanges.append(
            Exchange(
                index: index, device: device, kind: Self.kind(of: request),
                pushedThrough: Self.kind(of: request) == .push ? Self.highestSeq(in: request) : nil))
        noteEvent()
        defer {
            answered += 1
            noteEvent()
        }
        let verdict = await hook?(exchanges[index], .sent) ?? .deliver
        if serverIsDown { throw SyncClientError.unreachable("server down") }
        switch verdict {
        case .fail(let error): throw error
        case .answer(let response):
            exchanges[index].status = response.status
            return response
        case .deliver, .loseAnswer: break
        }
        let response: SyncHTTPResponse
        if exchanges[index].kind == .longPoll {
            response = try await longPoll(request, index: index, device: device)
        } else {
            response = await server.handle(request)
        }
        if exchanges[index].kind == .push, response.status == 200 {
            pushesStored += 1
            wake(.longPoll)
        }
        _ = await hook?(exchanges[index], .handled)
        if case .loseAnswer = verdict { throw SyncClientError.unreachable("answer lost") }
        if serverIsDown { throw SyncClientError.unreachable("server went down before answering") }
        exchanges[index].status = response.status
        return response
    }

    /// The server's long-poll, with the waiting done here: answered at once when there is news,
    /// else parked until a push lands (or a release, or the server going down), then answered.
    func longPoll(_ request: SyncHTTPRequest, index: Int, device: String) async throws -> SyncHTTPResponse {
        var immediate = request
        immediate.path = Self.withoutWait(request.path)
        let stored = pushesStored
        let response = await server.handle(immediate)
        // A push that landed while the server answered would not wake a poll parked after it.
        guard response.status == 200, Self.isEmptyPage(response.body), stored == pushesStored else {
            return response
        }
        try await park(device, as: .longPoll)
        if serverIsDown { throw SyncClientError.unreachable("server down") }
        // Woken by a push or a release: the answer is what the server holds now (maybe empty).
        return await server.handle(immediate)
    }

    func park(_ device: String, sleeping duration: Duration) async throws {
        try Task.checkCancellation()
        sleeps[device, default: []].append(duration)
        try await park(device, as: .sleep)
    }

    /// Where a device can be parked.
    enum Parking { case longPoll, sleep }

    /// Parks the calling request or sleep until ``wake(_:)``; throws `CancellationError` if its task
    /// is cancelled first (the client gave up on it).
    func park(_ device: String, as kind: Parking) async throws {
        let id = nextParking
        nextParking += 1
        let woken = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                parked[kind, default: [:]][id] = (device, continuation)
                noteEvent()
            }
        } onCancel: {
            Task { await self.unpark(kind, id) }
        }
        if !woken { throw CancellationError() }
    }

    /// Ends every parked wait of `kind`.
    func wake(_ kind: Parking) {
        let waiting = parked[kind] ?? [:]
        parked[kind] = [:]
        for (_, entry) in waiting { entry.continuation.resume(returning: true) }
    }

    func unpark(_ kind: Parking, _ id: Int) {
        parked[kind]?.removeValue(forKey: id)?.continuation.resume(returning: false)
        noteEvent()
    }

    func noteEvent() {
        events += 1
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter.resume() }
    }

    // MARK: Reading requests

    static func kind(of request: SyncHTTPRequest) -> RequestKind {
        if request.method == "POST", request.path.hasPrefix("/v1/push") { return .push }
        if request.method == "GET", request.path.hasPrefix("/v1/devices/") { return .device }
        if request.method == "GET", request.path == "/v1/account" { return .account }
        guard request.method == "GET", request.path.hasPrefix("/v1/pull") else { return .other }
        return waitSeconds(in: request.path) > 0 ? .longPoll : .pull
    }

    static func waitSeconds(in path: String) -> Int {
        guard let query = URLComponents(string: path)?.queryItems else { return 0 }
        return query.first { $0.name == "wait" }?.value.flatMap { Int($0) } ?? 0
    }

    static func withoutWait(_ path: String) -> String {
        guard var components = URLComponents(string: path) else { return path }
        components.queryItems = components.queryItems?.filter { $0.name != "wait" }
        return components.string ?? path
    }

    static func highestSeq(in request: SyncHTTPRequest) -> Int64? {
        // Devices on this network push plain JSON (``LiveFleet`` turns compression off).
        guard let body = request.body, request.headers["Content-Encoding"] == nil else { return nil }
        return (try? JSONCoding.decode(PushRequest.self, from: body))?.changes.map(\.seq).max()
    }

    static func isEmptyPage(_ body: Data) -> Bool {
        (try? JSONCoding.decode(PullResponse.self, from: body))?.changes.isEmpty ?? false
    }
}

/// A device's transport through a ``LiveNetwork``.
struct LiveTransport: SyncTransport {
    let network: LiveNetwork
    let device: String

    func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
        try await network.send(request, from: device)
    }
}
