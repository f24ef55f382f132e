import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncCore
import TipSyncServer
import TipSyncServerTestSupport
import TipSyncTestSupport

/// A Swift app shipped at an earlier protocol revision keeps syncing with today's server (protocol.md
/// §18). `Tests/Transcripts/swift-agent-<revision>.json` is what `tipsync-agent` as released at that
/// revision (its git tag `protocol-<revision>`, built once) said to a server and heard back, recorded
/// through `Tests/Transcripts/record.py`. This test sends the same requests, byte for byte, to
/// today's server while today's Swift client uses the same account, and checks that each answer
/// still holds what the old client read — the same status, every member of the recorded JSON with the
/// same kind of value — and that dismissals cross both ways: the old agent's pull carries today's
/// dismissal, and today's client reads the old agent's.
@Suite struct CompatibilityTranscriptTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Transcripts")

    static var transcripts: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasPrefix("swift-agent-") && $0.hasSuffix(".json") }.sorted()
    }

    @Test func aTranscriptIsThere() {
        #expect(!Self.transcripts.isEmpty)
    }

    @Test(arguments: transcripts)
    func anEarlierAgentSyncsWithTodaysServer(_ name: String) async throws {
        let transcript = try JSONParser.parse(try Data(contentsOf: Self.directory.appendingPathComponent(name)))
        guard case .string(let device)? = transcript["device"], let catalog = transcript["catalog"],
            case .array(let exchanges)? = transcript["exchanges"], case .string(let oldTip)? = transcript["dismissed"],
            case .string(let todayTip)? = transcript["dismissedToday"]
        else {
            Issue.record("\(name): needs device, catalog, exchanges, dismissed and dismissedToday")
            return
        }
        let fixture = try await ServerFixture.make(devices: [device, "today"])
        _ = try await CatalogComposition(fixture.store).putCatalogJSON(
            catalog.canonicalText, uploadedBy: "test", at: 1, restoredFrom: nil)
        let today = try makeDevice("today")
        try await fixture.app().test(.live) { server in
            let port = try #require(server.port)
            var configuration = SyncConfiguration(
                server: URL(string: "http://127.0.0.1:\(port)")!, token: fixture.tokens["today"]!)
            configuration.liveStream = false
            configuration.followsServerCatalog = true
            let client = SyncClient(replica: today, configuration: configuration)
            try await client.syncOnce()
            // Today's client dismisses first, so the old agent's recorded pulls now carry it too.
            try today.invalidate(tip: todayTip, reason: .tipClosed)
            try await client.syncOnce()

            // Values the server chose when the transcript was recorded (cursors, generations) stand
            // for the ones it chooses now in every later request.
            var replaced: [String: String] = [:]
            var carriesTodaysDismissal = false
            for (index, exchange) in exchanges.enumerated() {
                let label = "\(name) exchanges[\(index)]"
                guard let request = exchange["request"], case .string(let method)? = request["method"],
                    case .string(var path)? = request["path"], let response = exchange["response"],
                    case .int(let status)? = response["status"]
                else {
                    Issue.record("\(label): needs request.method, request.path and response.status")
                    continue
                }
                for (old, new) in replaced {
                    // As sent, or with its '.' percent-encoded (as the Swift client writes a query).
                    path = path.replacingOccurrences(of: old, with: new)
                        .replacingOccurrences(
                            of: old.replacingOccurrences(of: ".", with: "%2E"),
                            with: new.replacingOccurrences(of: ".", with: "%2E"))
                }
                var headers = HTTPFields()
                if case .object(let recorded)? = request["headers"] {
                    for (field, value) in recorded {
                        // Answers uncompressed: the transcript holds them inflated.
                        guard field != "accept-encoding", let name = HTTPField.Name(field),
                            case .string(let value) = value
                        else { continue }
                        headers[name] = field == "authorization" ? "Bearer \(fixture.tokens[device]!)" : value
                    }
                }
                var body: ByteBuffer?
                if case .string(let base64)? = request["bodyBase64"], let bytes = Data(base64Encoded: base64) {
                    body = ByteBuffer(bytes: bytes)
                }
                let answer = try await server.execute(
                    uri: path, method: HTTPRequest.Method(method)!, headers: headers, body: body)
                #expect(Int64(answer.status.code) == status, "\(label): \(method) \(path)")
                guard let wanted = response["json"], wanted != .null else { continue }
                let actual = try JSONParser.parse(Data(answer.body.readableBytesView))
                for difference in Self.shapeDifferences(actual, wanted, at: "") {
                    Issue.record("\(label) \(method) \(path): \(difference)")
                }
                for member in ["cursor", "generation"] {
                    if case .string(let old)? = wanted[member], case .string(let new)? = actual[member], old != new {
                        replaced[old] = new
                    }
                }
                if path.hasPrefix("/v1/pull"), case .array(let changes)? = actual["changes"] {
                    carriesTodaysDismissal =
                        carriesTodaysDismissal
                        || changes.contains { $0["kind"] == .string("eligibility") && $0["tip"] == .string(todayTip) }
                }
            }
            #expect(carriesTodaysDismissal, "the old agent's pulls carry today's dismissal of \(todayTip)")
            try await client.syncOnce()
            #expect(
                today.status(ofTip: oldTip) == .invalidated(.tipClosed),
                "the old agent's dismissal reaches today's client")
        }
    }

    /// What the old client read and today's answer lacks: each member of a recorded object must be
    /// there with the same kind of value (an object, an array, a string, a number, a boolean, null);
    /// each element of an array must be read like one of the recorded elements.
    static func shapeDifferences(_ actual: JSONValue, _ wanted: JSONValue, at path: String) -> [String] {
        switch (actual, wanted) {
        case (.object(let have), .object(let want)):
            return want.sorted { $0.key < $1.key }.flatMap { key, value -> [String] in
                guard let member = have[key] else { return ["\(path).\(key): missing"] }
                return shapeDifferences(member, value, at: "\(path).\(key)")
            }
        case (.array(let have), .array(let want)):
            // Each element read like one of the recorded elements (a page's changes are of several kinds).
            guard !want.isEmpty else { return [] }
            return have.enumerated().flatMap { index, element -> [String] in
                let tries = want.map { shapeDifferences(element, $0, at: "\(path)[\(index)]") }
                return tries.contains { $0.isEmpty } ? [] : tries.min { $0.count < $1.count } ?? []
            }
        case (.string, .string), (.bool, .bool), (.null, .null):
            return []
        case (.int, .int), (.int, .double), (.double, .int), (.double, .double):
            return []
        default:
            return [
                "\(path.isEmpty ? "the answer" : path): \(actual.canonicalText.prefix(80)), expected a value like \(wanted.canonicalText.prefix(80))"
            ]
        }
    }
}
