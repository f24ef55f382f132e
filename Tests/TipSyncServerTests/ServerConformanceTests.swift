import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSyncCore
import TipSyncServer

/// Runs the server vectors of `conformance/server/` (format: `conformance/README.md`) against an
/// in-process server: each vector's requests in order, on a fresh account whose devices `phone`
/// and `laptop` hold tokens. Another server implementation runs the same files to prove it answers
/// as this one does.
@Suite struct ServerConformanceTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("conformance/server")

    static var vectorNames: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }

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
        let adminKey = try await fixture.store.createAdminKey(name: "admin", at: 1).key
        try await fixture.app().test(.router) { client in
            for (index, request) in requests.enumerated() {
                let label = "\(name) requests[\(index)]"
                guard case .string(let method)? = request["method"], case .string(let path)? = request["path"],
                    case .object(let expect)? = request["expect"]
                else {
                    Issue.record("\(label): needs method, path and expect")
                    continue
                }
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
                let (status, responseBody, responseHeaders) = try await client.execute(
                    uri: path, method: HTTPRequest.Method(method) ?? .get, headers: headers, body: body
                ) { ($0.status.code, String(buffer: $0.body), $0.headers) }
                for mismatch in Self.mismatches(status: status, body: responseBody, expect: expect) {
                    Issue.record("\(label) \(method) \(path): \(mismatch)")
                }
                if case .object(let wanted)? = expect["headers"] {
                    for (name, value) in wanted {
                        let actual = HTTPField.Name(name).flatMap { responseHeaders[$0] }
                        if case .string(let value) = value, actual != value {
                            Issue.record(
                                "\(label) \(method) \(path): header \(name) is \(actual ?? "absent"), expected \(value)"
                            )
                        }
                    }
                }
            }
        }
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
        if let wanted = expect["json"] {
            if let json {
                if let difference = Self.subsetDifference(json, wanted, at: "") { found.append(difference) }
            } else {
                found.append("the body is not JSON: \(body.prefix(300))")
            }
        }
        return found
    }

    /// Where `actual` fails to contain `wanted`: objects need every wanted member (more are allowed),
    /// arrays the same length with each element contained, scalars equality.
    static func subsetDifference(_ actual: JSONValue, _ wanted: JSONValue, at path: String) -> String? {
        switch (actual, wanted) {
        case (.object(let have), .object(let want)):
            for (key, value) in want {
                guard let member = have[key] else { return "\(path).\(key): missing" }
                if let difference = subsetDifference(member, value, at: "\(path).\(key)") { return difference }
            }
            return nil
        case (.array(let have), .array(let want)):
            guard have.count == want.count else { return "\(path): \(have.count) elements, expected \(want.count)" }
            for (index, pair) in zip(have, want).enumerated() {
                if let difference = subsetDifference(pair.0, pair.1, at: "\(path)[\(index)]") { return difference }
            }
            return nil
        default:
            return actual == wanted && actual.canonicalText == wanted.canonicalText
                ? nil : "\(path): got \(actual.canonicalText), expected \(wanted.canonicalText)"
        }
    }
}

extension JSONValue {
    /// An object's member, or `nil`.
    fileprivate subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }
}
