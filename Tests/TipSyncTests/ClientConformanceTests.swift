import Foundation
import Synchronization
import Testing
import TipSync
import TipSyncCore
import TipSyncTestSupport

/// Runs the client vectors of `conformance/client/` (format: `conformance/README.md`, protocol.md
/// §14) with the Swift ``SyncClient`` and ``TipsReplica``: the vector's local operations on a fresh
/// replica, its sync operations against the vector's scripted server answers, and after each
/// `expect` step the requests the client sent and what the replica then reads. The JavaScript
/// client runs the same files (`clients/web/test/client-conformance.test.js`).
@Suite struct ClientConformanceTests {
    static let directory = ConformanceCorpus.directory("client")
    static var vectorNames: [String] { ConformanceCorpus.vectorNames("client") }

    @Test func theCorpusIsThere() {
        #expect(Self.vectorNames.count >= 2)
    }

    @Test(arguments: vectorNames)
    func clientBehavesAsTheVectorSays(_ name: String) async throws {
        let vector = try JSONParser.parse(try Data(contentsOf: Self.directory.appendingPathComponent(name)))
        guard case .string(let device)? = vector["device"], let now = vector["now"]?.number,
            case .array(let steps)? = vector["steps"], case .object(let script)? = vector["server"]
        else { throw VectorError("\(name): needs \"device\", \"now\", \"server\" and \"steps\"") }
        let clock = ManualClock(Date(timeIntervalSince1970: now / 1000))
        let replica = try makeReplica(device, clock: clock, directory: temporaryDirectory("client-\(name)"))
        let catalog = try Catalog(validating: Array((vector["catalog"] ?? .object([:])).canonicalText.utf8))
        try replica.load(catalog: catalog)
        if case .object(let context)? = vector["context"] {
            // The device's context before the first step (§13.8): what targeting and experiments read.
            func member(_ name: String) -> String? { if case .string(let text)? = context[name] { text } else { nil } }
            var given = replica.deviceContext
            if context["platform"] != nil { given.platform = member("platform") }
            if context["appVersion"] != nil { given.appVersion = member("appVersion") }
            if context["locale"] != nil { given.locale = member("locale") }
            replica.deviceContext = given
            if let account = member("account") { try replica.setAccount(account) }
        }
        let server = ScriptedServer(script: script, now: Int64(now))
        var configuration = SyncConfiguration(server: URL(string: "http://conformance.invalid")!, token: "token")
        if case .array(let tokens)? = vector["tokens"] {
            // The credential source: its tokens in turn, the last again once they run out.
            let given = Mutex(0)
            let texts = tokens.compactMap { if case .string(let text) = $0 { text } else { nil } }
            configuration.tokenProvider = {
                given.withLock { count in
                    defer { count += 1 }
                    return texts[min(count, texts.count - 1)]
                }
            }
        }
        configuration.compressPushes = false  // bodies compared as JSON
        let client = SyncClient(replica: replica, configuration: configuration, transport: server, sleep: { _ in })
        var states: [String] = []

        for (index, step) in steps.enumerated() {
            let label = "\(name) steps[\(index)]"
            if case .object(let expect)? = step["expect"] {
                var found = try Self.mismatches(replica: replica, sent: server.takeRequests(), expect: expect)
                found += Self.mismatches(status: await client.status, states: states, expect: expect)
                states = []
                for mismatch in found { Issue.record("\(label): \(mismatch)") }
                if !found.isEmpty { break }  // later steps build on this one: stop at the first check that fails
                continue
            }
            if step["refused"] == .bool(true) {
                // A local operation the writer must refuse, storing nothing.
                do {
                    switch step["do"] {
                    case .string("donate"):
                        guard case .string(let event)? = step["event"] else {
                            throw VectorError("\(label): needs event")
                        }
                        try replica.donate(event: event, info: step["info"])
                    default:
                        guard case .string(let id)? = step["id"], let value = step["value"] else {
                            throw VectorError("\(label): setParameter needs id and value")
                        }
                        try replica.setParameter(id, to: value)
                    }
                    Issue.record("\(label): \(step["do"]?.canonicalText ?? "") was written, expected it refused")
                } catch is VectorError {
                    throw VectorError("\(label): a refused step is a donate or a setParameter")
                } catch {}
                continue
            }
            switch step["do"] {
            case .string("donate"):
                guard case .string(let event)? = step["event"] else {
                    throw VectorError("\(label): donate needs event")
                }
                try replica.donate(event: event, info: step["info"])
            case .string("setParameter"):
                guard case .string(let id)? = step["id"], let value = step["value"] else {
                    throw VectorError("\(label): setParameter needs id and value")
                }
                try replica.setParameter(id, to: value)
            case .string("resetDatastore"):
                try replica.resetDatastore()
            case .string("askStatus"):
                // The app asks whether to show the tip now: what records its experiment's reach (§13.12).
                guard case .string(let tip)? = step["tip"], replica.displayStatus(ofTip: tip) != nil else {
                    throw VectorError("\(label): askStatus needs a tip of the catalog")
                }
            case .string("display"):
                guard case .string(let tip)? = step["tip"] else { throw VectorError("\(label): display needs tip") }
                try replica.recordDisplay(tip: tip)
            case .string("pull"):
                try await client.pull()
            case .string("push"):
                try await client.push()
            case .string("run"):
                guard case .string(let until)? = step["until"] else { throw VectorError("\(label): run needs until") }
                let (reached, seen) = await Self.run(client, until: until, server: server)
                states += seen
                if !reached { Issue.record("\(label): the client never reached '\(until)'; its states: \(seen)") }
            default:
                throw VectorError("\(label): unknown step \(step.canonicalText)")
            }
        }
        try replica.close()
    }

    /// Runs ``SyncClient/run()`` until its status says `until` (then cancels it), the run ends, or the
    /// scripted server has answered more requests than any vector needs (a client retrying what it
    /// should not); the states it went through, each once in a row.
    static func run(_ client: SyncClient, until: String, server: ScriptedServer) async -> (Bool, [String]) {
        let updates = await client.statusUpdates()
        let running = Task { try await client.run() }
        defer { running.cancel() }
        let seen = SeenStates()
        let note = seen.note
        let reached = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await status in updates {
                    note(status.state)
                    if status.state.rawValue == until { return true }
                }
                return false
            }
            group.addTask {
                _ = try? await running.value
                let final = await client.status.state
                note(final)
                return final.rawValue == until
            }
            group.addTask {
                await server.overrun()
                return false
            }
            let first = await group.next() ?? false
            running.cancel()  // the child that awaits the run returns once it has ended
            group.cancelAll()
            return first
        }
        running.cancel()
        _ = try? await running.value
        return (reached, seen.states.withLock { $0 })
    }

    /// What differs from a check of the client's status: `states` (those it went through since the
    /// last check, in order with others allowed between) and `sync` (members of its status now).
    static func mismatches(status: SyncStatus, states: [String], expect: [String: JSONValue]) -> [String] {
        var found: [String] = []
        if case .array(let wanted)? = expect["states"] {
            var next = states.startIndex
            for state in wanted {
                guard case .string(let name) = state, let at = states[next...].firstIndex(of: name) else {
                    found.append(
                        "states: expected \(JSONValue.array(wanted).canonicalText) in order, went through \(states)")
                    break
                }
                next = at + 1
            }
        }
        if case .object(let members)? = expect["sync"] {
            let actual = status.json
            for (name, wanted) in members where actual[name] != wanted {
                found.append(
                    "sync.\(name): got \(actual[name]?.canonicalText ?? "nothing"), expected \(wanted.canonicalText)")
            }
        }
        return found
    }

    /// What differs from a check: the requests sent since the last check (`requests`, in order with
    /// others allowed between), and what the replica reads.
    static func mismatches(replica: TipsReplica, sent: [SyncHTTPRequest], expect: [String: JSONValue]) throws
        -> [String]
    {
        var found: [String] = []
        if case .array(let wanted)? = expect["requests"] {
            var next = sent.startIndex
            for (index, request) in wanted.enumerated() {
                guard let found = sent[next...].firstIndex(where: { Self.request($0, matches: request) }) else {
                    found.append(
                        "requests[\(index)]: \(request.canonicalText) is not among the requests after the last one found; "
                            + "sent \(sent.map { "\($0.method) \($0.path)" })")
                    break
                }
                next = found + 1
            }
        }
        if let wanted = expect["requestCount"], JSONValue.int(Int64(sent.count)) != wanted {
            found.append(
                "requestCount: sent \(sent.count) (\(sent.map { "\($0.method) \($0.path)" })), expected \(wanted.canonicalText)"
            )
        }
        if let wanted = expect["localSeq"], JSONValue.int(try replica.lastLocalSeq) != wanted {
            found.append("localSeq: got \(try replica.lastLocalSeq), expected \(wanted.canonicalText)")
        }
        if let wanted = expect["acknowledged"], JSONValue.int(try replica.syncProgress.pushedSeq) != wanted {
            found.append("acknowledged: got \(try replica.syncProgress.pushedSeq), expected \(wanted.canonicalText)")
        }
        if case .object(let parameters)? = expect["parameters"] {
            for (id, wanted) in parameters where replica.parameterValue(id) != wanted {
                found.append(
                    "parameter '\(id)': got \(replica.parameterValue(id).canonicalText), expected \(wanted.canonicalText)"
                )
            }
        }
        if case .object(let events)? = expect["donations"] {
            for (event, wanted) in events {
                let actual = JSONValue.array(replica.state.donations(of: event).map { .string($0.id) })
                if actual != wanted {
                    found.append(
                        "donations of '\(event)': got \(actual.canonicalText), expected \(wanted.canonicalText)")
                }
            }
        }
        if case .object(let statuses)? = expect["status"] {
            for (tip, wanted) in statuses {
                let actual = replica.status(ofTip: tip).map { JSONValue.string($0.protocolName) } ?? .null
                if actual != wanted {
                    found.append("status of '\(tip)': got \(actual.canonicalText), expected \(wanted.canonicalText)")
                }
            }
        }
        return found
    }

    /// Whether a sent request is the one a vector describes: its `method`, its `path` without the
    /// query, each `query` parameter given (decoded; `null`: absent), and a `body` its JSON contains
    /// (conformance/README).
    static func request(_ request: SyncHTTPRequest, matches wanted: JSONValue) -> Bool {
        let components = URLComponents(string: request.path)
        guard wanted["method"] == .string(request.method), wanted["path"] == .string(components?.path ?? "")
        else { return false }
        if let authorization = wanted["authorization"], authorization != .string(request.headers["Authorization"] ?? "")
        {
            return false
        }
        if case .object(let query)? = wanted["query"] {
            for (name, value) in query {
                let actual = components?.queryItems?.first { $0.name == name }.map { JSONValue.string($0.value ?? "") }
                if (actual ?? .null) != value { return false }
            }
        }
        if let body = wanted["body"] {
            guard let sent = request.body, let json = try? JSONParser.parse(sent),
                json.containmentDifference(body, at: "body") == nil
            else { return false }
        }
        return true
    }

    struct VectorError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// The states a client went through, each once in a row.
final class SeenStates: Sendable {
    let states = Mutex<[String]>([])

    @Sendable func note(_ state: SyncState) {
        states.withLock { if $0.last != state.rawValue { $0.append(state.rawValue) } }
    }
}

/// The vector's server: answers each request from the script by `"METHOD /path"` (the path without
/// its query), the listed answers in turn and the last one again once they run out; anything not
/// in the script is `404 not_found`. Records every request.
final class ScriptedServer: SyncTransport {
    private let script: [String: [JSONValue]]
    private let now: Int64
    private let state = Mutex<(sent: [SyncHTTPRequest], answered: [String: Int], total: Int)>(([], [:], 0))

    init(script: [String: JSONValue], now: Int64) {
        self.script = script.compactMapValues { if case .array(let answers) = $0 { answers } else { nil } }
        self.now = now
    }

    /// More requests than any vector needs: the client retries what it should not (or never stops).
    static let requestBound = 200
    private let overrunSignal = AsyncStream<Void>.makeStream()

    /// Returns once the server has answered more than ``requestBound`` requests.
    func overrun() async {
        for await _ in overrunSignal.stream { return }
    }

    func takeRequests() -> [SyncHTTPRequest] {
        state.withLock { state in
            defer { state.sent = [] }
            return state.sent
        }
    }

    func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
        let path = URLComponents(string: request.path)?.path ?? request.path
        let route = "\(request.method) \(path)"
        let (answer, count): (JSONValue?, Int) = state.withLock { state in
            state.sent.append(request)
            state.total += 1
            let count = state.total
            guard let answers = script[route], !answers.isEmpty else { return (nil, count) }
            let index = min(state.answered[route, default: 0], answers.count - 1)
            state.answered[route, default: 0] += 1
            return (answers[index], count)
        }
        if count > Self.requestBound {
            overrunSignal.continuation.yield()
            try await Task.sleep(for: .seconds(3600))  // held until the runner cancels the client
        }
        guard let answer, case .int(let status)? = answer["status"] else {
            let body = #"{"error":{"code":"not_found","message":"no such route","serverTime":\#(now)}}"#
            return SyncHTTPResponse(status: 404, body: Data(body.utf8), headers: ["content-type": "application/json"])
        }
        let body = answer["json"].map { Data($0.canonicalText.utf8) } ?? Data()
        return SyncHTTPResponse(status: Int(status), body: body, headers: ["content-type": "application/json"])
    }
}
