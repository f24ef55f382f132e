import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSyncCore
import TipSyncServer
import TipSyncServerTestSupport
import TipSyncTestSupport

/// Runs the server vectors of `conformance/server/` (format: `conformance/README.md`) against an
/// in-process server: each vector's requests in order, on a fresh account whose devices `phone`
/// and `laptop` hold tokens. Another server implementation runs the same files to prove it answers
/// as this one does.
@Suite struct ServerConformanceTests {
    static let directory = ConformanceCorpus.directory("server")
    static var vectorNames: [String] { ConformanceCorpus.vectorNames("server") }

    @Test func theCorpusIsThere() {
        #expect(Self.vectorNames.count >= 3)
    }

    @Test(arguments: vectorNames)
    func serverAnswersAsTheVectorSays(_ name: String) async throws {
        let json = try JSONParser.parse(try Data(contentsOf: Self.directory.appendingPathComponent(name)))
        guard case .array(let requests)? = json["requests"] else {
            Issue.record("\(name): needs a \"requests\" array")
            return
        }
        let fixture = try await ServerFixture.make()
        let adminKey = try await CredentialIssuance(fixture.store).createAdminKey(name: "admin", at: 1).key
        let notifier = ChangeNotifier()
        let app = buildApplication(
            configuration: .test, dependencies: ServerDependencies(store: fixture.store, notifier: notifier))
        try await app.test(.router) { client in
            // Values a request saved (`save`), substituted for `{{name}}` in later paths and expectations.
            // `{{account}}` is the fixture's account, percent-encoded (for the admin routes).
            var saved: [String: String] = ["account": "alice"]
            // Streams opened (`open`) and not read yet: the request's expectation and its answer.
            var streams: [String: (expect: [String: JSONValue], answer: Task<(Int, String, HTTPFields), any Error>)] =
                [:]
            for (index, request) in requests.enumerated() {
                let label = "\(name) requests[\(index)]"
                if case .string(let stream)? = request["read"] {
                    // This in-process runner ends the stream from the server's side (what a restart
                    // does): the stream first writes everything its news asked for, then the body ends.
                    guard let open = streams.removeValue(forKey: stream), case .object(let expect)? = request["expect"],
                        let count = request["events"]?.number
                    else {
                        Issue.record("\(label): reads a stream that was not opened, or has no events and expect")
                        continue
                    }
                    notifier.finishAll()
                    let (status, body, headers) = try await open.answer.value
                    for mismatch in Self.mismatches(status: status, body: "", expect: open.expect) {
                        Issue.record("\(label) stream \(stream): \(mismatch)")
                    }
                    Self.checkHeaders(headers, open.expect, label: "\(label) stream \(stream)")
                    let events = Array(LiveChangesTests.events(body).prefix(Int(count)))
                    for mismatch in Self.streamMismatches(events, expect: Self.substituted(.object(expect), saved)) {
                        Issue.record("\(label) stream \(stream): \(mismatch)")
                    }
                    continue
                }
                guard case .string(let method)? = request["method"], case .string(var path)? = request["path"],
                    case .object(var expect)? = request["expect"]
                else {
                    Issue.record("\(label): needs method, path and expect")
                    continue
                }
                for (key, value) in saved { path = path.replacingOccurrences(of: "{{\(key)}}", with: value) }
                if case .object(let substituted) = Self.substituted(.object(expect), saved) { expect = substituted }
                var headers = HTTPFields()
                if case .string(let device)? = request["as"] {
                    // "admin": an admin key (section 15); any other name: that device's token.
                    headers[.authorization] =
                        "Bearer \(device == "admin" ? adminKey : fixture.tokens[device] ?? "none")"
                }
                if case .object(let fields)? = request["headers"] {
                    for (field, value) in fields {
                        if let field = HTTPField.Name(field), case .string(let value) = value { headers[field] = value }
                    }
                }
                var body: ByteBuffer?
                if case .string(let text)? = request["bodyText"] {
                    body = ByteBuffer(string: text)
                } else if let value = request["body"] {
                    body = ByteBuffer(string: value.canonicalText)
                }
                if case .string(let stream)? = request["open"] {
                    let subscribed = notifier.count
                    let requestPath = path
                    let requestHeaders = headers
                    let answer = Task {
                        try await client.execute(uri: requestPath, method: .get, headers: requestHeaders) {
                            ($0.status.code, String(buffer: $0.body), $0.headers)
                        }
                    }
                    // Open once the stream has subscribed (it sees every push from here on).
                    while notifier.count == subscribed { await Task.yield() }
                    streams[stream] = (expect, answer)
                    continue
                }
                let (status, responseBody, responseHeaders) = try await client.execute(
                    uri: path, method: HTTPRequest.Method(method) ?? .get, headers: headers, body: body
                ) { ($0.status.code, String(buffer: $0.body), $0.headers) }
                for mismatch in Self.mismatches(status: status, body: responseBody, expect: expect) {
                    Issue.record("\(label) \(method) \(path): \(mismatch)")
                }
                Self.checkHeaders(responseHeaders, expect, label: "\(label) \(method) \(path)")
                if case .object(let names)? = request["save"],
                    let json = try? JSONParser.parse(Array(responseBody.utf8))
                {
                    for (key, member) in names {
                        if case .string(let member) = member, case .string(let value)? = json[member] {
                            saved[key] = value
                        }
                    }
                }
            }
            #expect(streams.isEmpty, "\(name): every stream opened is read")
        }
    }

    static func checkHeaders(_ headers: HTTPFields, _ expect: [String: JSONValue], label: String) {
        guard case .object(let wanted)? = expect["headers"] else { return }
        for (name, value) in wanted {
            let actual = HTTPField.Name(name).flatMap { headers[$0] }
            if case .string(let value) = value, actual != value {
                Issue.record("\(label): header \(name) is \(actual ?? "absent"), expected \(value)")
            }
        }
    }

    /// `value` with `{{name}}` in every string replaced by what was saved under `name`.
    static func substituted(_ value: JSONValue, _ saved: [String: String]) -> JSONValue {
        switch value {
        case .string(var text):
            for (key, replacement) in saved { text = text.replacingOccurrences(of: "{{\(key)}}", with: replacement) }
            return .string(text)
        case .array(let elements): return .array(elements.map { substituted($0, saved) })
        case .object(let members): return .object(members.mapValues { substituted($0, saved) })
        default: return value
        }
    }

    /// A stream's events against `expect.events` (each `event` name, and its data containing `json`),
    /// and the rule every stream keeps: each page's `from` is the `cursor` of the page before it.
    static func streamMismatches(_ events: [LiveChangesTests.Event], expect: JSONValue) -> [String] {
        var found: [String] = []
        guard case .array(let wanted)? = expect["events"] else { return ["expect.events is missing"] }
        if events.count != wanted.count { found.append("\(events.count) events, expected \(wanted.count)") }
        var previous: JSONValue?
        for (index, (event, want)) in zip(events, wanted).enumerated() {
            if case .string(let name)? = want["event"], name != event.name {
                found.append("events[\(index)] is \(event.name), expected \(name)")
            }
            let json = try? JSONParser.parse(Array(event.data.utf8))
            if let wantedJSON = want["json"] {
                if let json {
                    if let difference = json.containmentDifference(wantedJSON, at: "events[\(index)]") {
                        found.append(difference)
                    }
                } else {
                    found.append("events[\(index)]: the data is not JSON: \(event.data.prefix(300))")
                }
            }
            if event.name == "changes", let json {
                if let previous, json["from"] != previous {
                    found.append(
                        "events[\(index)]: from is \(json["from"]?.canonicalText ?? "absent"), not the cursor before it"
                    )
                }
                previous = json["cursor"]
            }
        }
        return found
    }

    static func mismatches(status: Int, body: String, expect: [String: JSONValue]) -> [String] {
        var found: [String] = []
        if let wanted = expect["status"]?.number, Int(wanted) != status {
            found.append("status \(status), expected \(Int(wanted)); body \(body.prefix(300))")
        }
        let json = try? JSONParser.parse(Array(body.utf8))
        if case .string(let code)? = expect["error"] {
            let actual = json?["error"]?["code"]
            if actual != .string(code) {
                found.append("error code \(actual?.canonicalText ?? "none"), expected \(code)")
            }
        }
        if case .string(let field)? = expect["field"] {
            guard case .string(let message)? = json?["error"]?["message"], message.hasPrefix(field + ":") else {
                found.append("error message should begin \"\(field):\", got \(body.prefix(300))")
                return found
            }
        }
        for (member, inOrder) in [("json", false), ("includes", true)] {
            guard let wanted = expect[member] else { continue }
            if let json {
                if let difference = json.containmentDifference(wanted, at: "", inOrder: inOrder) {
                    found.append("\(member): \(difference)")
                }
            } else {
                found.append("the body is not JSON: \(body.prefix(300))")
            }
        }
        return found
    }
}

extension JSONValue {
    /// An object's member, or `nil`.
    fileprivate subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }
}
